// Raw storages for ember.save/load and Tensor.untyped_storage(), and shared
// memory for the DataLoader's worker processes.
// See Note [Shared-memory storages].
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "ember/core/Allocator.h"
#include "ember/python/PyInterop.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

// Note [Shared-memory storages]
// A shared storage is an anonymous memory file (memfd_create) mapped
// MAP_SHARED. Another process receives the file descriptor (SCM_RIGHTS over a
// Unix socket, see ember/utils/data/_shared.py), maps it and reads the same
// pages: a batch crosses the process boundary without being copied or
// pickled byte by byte. The file has no name, so nothing can leak into
// /dev/shm: the kernel frees the pages when the last mapping and the last
// descriptor are gone, even if a process dies.
// The creating process keeps the descriptor open for the storage's lifetime
// (so the storage can be sent again); g_shm_fds maps the block's address to
// it. A receiver closes its descriptor right after mapping.

namespace ember::python {
namespace {

struct ShmBlock {
  void* addr;
  size_t len;
  int fd;  // owned; -1 once closed
};

constexpr size_t kPopulateLimit = size_t(16) << 20;

std::mutex g_shm_mutex;
std::unordered_map<const void*, int> g_shm_fds;

void free_shm(void* ctx) {
  auto* b = static_cast<ShmBlock*>(ctx);
  if (b->fd >= 0) {
    std::lock_guard<std::mutex> lock(g_shm_mutex);
    g_shm_fds.erase(b->addr);
  }
  munmap(b->addr, b->len);
  if (b->fd >= 0) close(b->fd);
  delete b;
}

[[noreturn]] void throw_errno(const char* what) { throw Error(str_cat(what, " failed: ", std::strerror(errno))); }

// Maps fd (which the block then owns when own_fd) as a CPU DataPtr of nbytes.
DataPtr map_shm(int fd, size_t nbytes, bool own_fd) {
  size_t len = nbytes ? nbytes : 1;
  // Prefaulting a batch-sized block at once is cheaper than a fault per page;
  // large blocks (a whole dataset moved to shared memory) map lazily.
  int flags = MAP_SHARED | (len <= kPopulateLimit ? MAP_POPULATE : 0);
  void* addr = mmap(nullptr, len, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (addr == MAP_FAILED) throw_errno("mmap of a shared-memory block");
  auto* b = new ShmBlock{addr, len, own_fd ? fd : -1};
  if (own_fd) {
    std::lock_guard<std::mutex> lock(g_shm_mutex);
    g_shm_fds[addr] = fd;
  }
  return DataPtr(addr, b, &free_shm, Device(DeviceType::CPU));
}

DataPtr new_shm(size_t nbytes) {
  int fd = memfd_create("ember-shm", MFD_CLOEXEC);
  if (fd < 0) throw_errno("memfd_create");
  if (ftruncate(fd, static_cast<off_t>(nbytes ? nbytes : 1)) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    throw_errno("ftruncate of a shared-memory block");
  }
  try {
    return map_shm(fd, nbytes, /*own_fd=*/true);
  } catch (...) {
    close(fd);
    throw;
  }
}

// A 1-D uint8 tensor over the whole of storage.
Tensor bytes_tensor(Storage storage) {
  int64_t n = static_cast<int64_t>(storage->nbytes());
  int64_t sizes[1] = {n};
  int64_t strides[1] = {1};
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), ScalarType::Byte, IntArrayRef(sizes, 1),
                                           IntArrayRef(strides, 1), 0));
}

const Tensor& tensor_arg(PyObject* o) {
  if (!is_tensor(o)) throw TypeError(str_cat("expected a Tensor, got ", Py_TYPE(o)->tp_name));
  return unpack_tensor(o);
}

std::vector<int64_t> int_list(PyObject* seq, const char* what) {
  PyObject* fast = PySequence_Fast(seq, what);
  if (!fast) throw python_error();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  std::vector<int64_t> out(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    try {
      out[i] = unpack_long(PySequence_Fast_GET_ITEM(fast, i));
    } catch (...) {
      Py_DECREF(fast);
      throw;
    }
  }
  Py_DECREF(fast);
  return out;
}

int shm_fd_of(const Tensor& t) {
  std::lock_guard<std::mutex> lock(g_shm_mutex);
  auto it = g_shm_fds.find(t.unsafeGetTensorImpl()->storage()->data());
  return it == g_shm_fds.end() ? -1 : it->second;
}

// ---- Python functions ---------------------------------------------------------------

// (storage identity, data address, nbytes, device string)
PyObject* py_storage_info(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  const Tensor& t = tensor_arg(arg);
  const Storage& s = t.unsafeGetTensorImpl()->storage();
  std::string dev = s->device().str();
  return Py_BuildValue("(KKns)", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(s.get())),
                       static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(s->data())),
                       static_cast<Py_ssize_t>(s->nbytes()), dev.c_str());
  EMBER_PY_CATCH
}

PyObject* py_storage_bytes(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  return wrap(bytes_tensor(tensor_arg(arg).unsafeGetTensorImpl()->storage()));
  EMBER_PY_CATCH
}

// _tensor_on_storage(bytes, dtype, offset, size, stride): a tensor of dtype
// viewing the storage of the uint8 tensor `bytes` (bounds checked as set_()).
PyObject* py_tensor_on_storage(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  PyObject *base, *dtype, *size, *stride;
  long long offset;
  if (!PyArg_ParseTuple(args, "OOLOO", &base, &dtype, &offset, &size, &stride)) return nullptr;
  const Tensor& b = tensor_arg(base);
  ScalarType st = parse_dtype(dtype);
  std::vector<int64_t> sizes = int_list(size, "size must be a sequence of ints");
  std::vector<int64_t> strides = int_list(stride, "stride must be a sequence of ints");
  EMBER_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  EMBER_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  const Storage& storage = b.unsafeGetTensorImpl()->storage();
  for (size_t d = 0; d < sizes.size(); ++d) {
    EMBER_CHECK(sizes[d] >= 0, "Trying to create tensor with negative dimension ", sizes[d]);
  }
  // A checkpoint's sizes and strides must fit its storage (Note [Checked sizes]).
  check_in_bounds_for_storage(sizes, strides, offset, element_size(st), storage->nbytes());
  return wrap(Tensor(make_intrusive<TensorImpl>(storage, st, sizes, strides, offset)));
  EMBER_PY_CATCH
}

// _shm_new(nbytes) -> (uint8 tensor over a new shared block, its fd)
PyObject* py_shm_new(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) throw python_error();
  EMBER_CHECK(n >= 0, "negative size");
  DataPtr data = new_shm(static_cast<size_t>(n));
  int fd;
  {
    std::lock_guard<std::mutex> lock(g_shm_mutex);
    fd = g_shm_fds.at(data.get());
  }
  Tensor t = bytes_tensor(make_intrusive<StorageImpl>(std::move(data), static_cast<size_t>(n)));
  PyObject* obj = wrap(t);
  return Py_BuildValue("(Ni)", obj, fd);
  EMBER_PY_CATCH
}

// _shm_map(fd, nbytes) -> uint8 tensor over the block behind fd. The caller
// keeps (and closes) fd; the mapping stays valid after that.
PyObject* py_shm_map(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  int fd;
  long long n;
  if (!PyArg_ParseTuple(args, "iL", &fd, &n)) return nullptr;
  EMBER_CHECK(n >= 0, "negative size");
  DataPtr data = map_shm(fd, static_cast<size_t>(n), /*own_fd=*/false);
  return wrap(bytes_tensor(make_intrusive<StorageImpl>(std::move(data), static_cast<size_t>(n))));
  EMBER_PY_CATCH
}

// _shm_fd(t) -> the fd of t's shared block, or -1 when t's storage is not one
// this process created.
PyObject* py_shm_fd(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  return PyLong_FromLong(shm_fd_of(tensor_arg(arg)));
  EMBER_PY_CATCH
}

// _share_memory_(t): moves t's storage (shared by all its views) into a new
// shared block, as Tensor.share_memory_().
PyObject* py_share_memory(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  const Tensor& t = tensor_arg(arg);
  EMBER_CHECK(t.device().is_cpu(), "share_memory_: only CPU tensors are supported");
  StorageImpl* s = t.unsafeGetTensorImpl()->storage().get();
  if (shm_fd_of(t) < 0) {
    DataPtr data = new_shm(s->nbytes());
    if (s->nbytes()) std::memcpy(data.get(), s->data(), s->nbytes());
    s->set_data_ptr(std::move(data));
  }
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyObject* py_is_shared(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  return PyBool_FromLong(shm_fd_of(tensor_arg(arg)) >= 0);
  EMBER_PY_CATCH
}

PyMethodDef storage_functions[] = {{"_storage_info", py_storage_info, METH_O, nullptr},
                                   {"_storage_bytes", py_storage_bytes, METH_O, nullptr},
                                   {"_tensor_on_storage", py_tensor_on_storage, METH_VARARGS, nullptr},
                                   {"_shm_new", py_shm_new, METH_O, nullptr},
                                   {"_shm_map", py_shm_map, METH_VARARGS, nullptr},
                                   {"_shm_fd", py_shm_fd, METH_O, nullptr},
                                   {"_share_memory_", py_share_memory, METH_O, nullptr},
                                   {"_is_shared", py_is_shared, METH_O, nullptr},
                                   {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_storage(PyObject* module) {
  if (PyModule_AddFunctions(module, storage_functions) < 0) throw python_error();
}

}  // namespace ember::python
