#pragma once
// Symbol visibility and small compiler helpers shared by every Ember library.

#if defined(_WIN32)
#define EMBER_EXPORT __declspec(dllexport)
#define EMBER_IMPORT __declspec(dllimport)
#else
#define EMBER_EXPORT __attribute__((visibility("default")))
#define EMBER_IMPORT EMBER_EXPORT
#endif

#define EMBER_LIKELY(x) __builtin_expect(!!(x), 1)
#define EMBER_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define EMBER_ALWAYS_INLINE inline __attribute__((always_inline))
#define EMBER_NOINLINE __attribute__((noinline))

// Each library defines its own *_BUILDING macro so that its API is exported
// when built and imported when consumed.
#ifdef EMBER_CORE_BUILDING
#define EMBER_CORE_API EMBER_EXPORT
#else
#define EMBER_CORE_API EMBER_IMPORT
#endif

#ifdef EMBER_CPU_BUILDING
#define EMBER_API EMBER_EXPORT
#else
#define EMBER_API EMBER_IMPORT
#endif
