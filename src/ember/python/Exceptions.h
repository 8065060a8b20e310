#pragma once
// Turns C++ exceptions into the Python exceptions PyTorch raises.

#include <Python.h>

#include <memory>
#include <stdexcept>

#include "ember/core/Error.h"
#include "ember/core/NotCompiledError.h"
#include "ember/core/OutOfMemoryError.h"

namespace ember::python {

// torch.OutOfMemoryError, created by init_cuda (RuntimeError until then).
inline PyObject* g_out_of_memory_error = nullptr;

// Raised from C++ when a Python error is already set.
struct python_error : std::exception {};

// Holds the GIL for a scope (for callbacks run by C++ code that released it).
class GilGuard {
 public:
  GilGuard() : state_(PyGILState_Ensure()) {}
  ~GilGuard() { PyGILState_Release(state_); }
  GilGuard(const GilGuard&) = delete;
  GilGuard& operator=(const GilGuard&) = delete;

 private:
  PyGILState_STATE state_;
};

// Drops a Python reference from any thread; once the interpreter has
// finalized (a C++ static destroyed at exit) the reference is left alone.
inline void release_pyobject(PyObject* o) {
  if (!Py_IsInitialized()) return;
  GilGuard gil;
  Py_DECREF(o);
}

// A shared owner of a new reference to o, released by release_pyobject.
inline std::shared_ptr<PyObject> hold_pyobject(PyObject* o) {
  Py_INCREF(o);
  return std::shared_ptr<PyObject>(o, release_pyobject);
}

inline void translate_exception() {
  try {
    throw;
  } catch (const python_error&) {
  } catch (const ember::IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const ember::TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ember::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const ember::NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const ember::NotCompiledError& e) {
    PyErr_SetString(PyExc_AssertionError, e.what());
  } catch (const ember::MissingModuleError& e) {
    PyErr_SetString(PyExc_ModuleNotFoundError, e.what());
  } catch (const ember::OutOfMemoryError& e) {
    PyErr_SetString(g_out_of_memory_error ? g_out_of_memory_error : PyExc_RuntimeError, e.what());
  } catch (const ember::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const std::bad_alloc& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());  // PyTorch's error type, not MemoryError
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace ember::python

#define EMBER_PY_TRY try {
#define EMBER_PY_CATCH                      \
  }                                         \
  catch (...) {                             \
    ::ember::python::translate_exception(); \
    return nullptr;                         \
  }
#define EMBER_PY_CATCH_RET(value)           \
  }                                         \
  catch (...) {                             \
    ::ember::python::translate_exception(); \
    return value;                           \
  }
