// Compares ember/cuda/Philox.h with curand's Philox4_32_10 on the device,
// bit for bit: every thread starts both at the same (seed, subsequence,
// offset), including offsets that are not multiples of 4 and values past
// 2^32, and makes the same mix of draws. Prints the number of mismatches.
#include <curand_kernel.h>

#include <cstdio>
#include <cstring>

#include "ember/cuda/Philox.h"

namespace px = ember::cuda::philox;

__device__ bool same_f(float a, float b) { return __float_as_uint(a) == __float_as_uint(b); }
__device__ bool same_d(double a, double b) { return __double_as_longlong(a) == __double_as_longlong(b); }

__global__ void compare(unsigned long long seed, unsigned long long* bad) {
  const unsigned long long t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long sub = t * 7919ull + ((t & 1) ? (1ull << 33) : 0);
  const unsigned long long off = (t % 13) + ((t & 2) ? (1ull << 34) : 0);
  curandStatePhilox4_32_10_t c;
  curand_init(seed, sub, off, &c);
  px::State e = px::init(seed, sub, off);
  bool ok = true;
  for (int i = 0; i < 12; ++i) {
    switch ((i + t) % 6) {
      case 0: {
        const uint4 a = curand4(&c);
        const px::U4 b = e.next4();
        ok = ok && a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
        break;
      }
      case 1: {
        const float4 a = curand_uniform4(&c);
        const px::F4 b = px::uniform4(e);
        ok = ok && same_f(a.x, b.x) && same_f(a.y, b.y) && same_f(a.z, b.z) && same_f(a.w, b.w);
        break;
      }
      case 2: {
        const float4 a = curand_normal4(&c);
        const px::F4 b = px::normal4(e);
        ok = ok && same_f(a.x, b.x) && same_f(a.y, b.y) && same_f(a.z, b.z) && same_f(a.w, b.w);
        break;
      }
      case 3: {
        const double2 a = curand_uniform2_double(&c);
        const px::D2 b = px::uniform2_double(e);
        ok = ok && same_d(a.x, b.x) && same_d(a.y, b.y);
        break;
      }
      case 4: {
        const double2 a = curand_normal2_double(&c);
        const px::D2 b = px::normal2_double(e);
        ok = ok && same_d(a.x, b.x) && same_d(a.y, b.y);
        break;
      }
      default: ok = ok && curand(&c) == e.next(); break;
    }
  }
  if (!ok) atomicAdd(bad, 1ull);
}

int main() {
  unsigned long long* bad = nullptr;
  if (cudaMallocManaged(&bad, sizeof(*bad)) != cudaSuccess) return 2;
  *bad = 0;
  const unsigned long long seeds[] = {0ull, 42ull, 67280421310721ull, 0xffffffffffffffffull};
  for (unsigned long long s : seeds) compare<<<64, 256>>>(s, bad);
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  std::printf("mismatching threads: %llu of %d\n", *bad, 4 * 64 * 256);
  return *bad == 0 ? 0 : 1;
}
