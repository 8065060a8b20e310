// Raw storages for ember.save/load and Tensor.untyped_storage(), and shared
// memory for ember.multiprocessing and the DataLoader's worker processes.
// See Note [Shared-memory storages] in ember/core/SharedMemory.cpp.
#include <cstring>
#include <exception>
#include <string>

#include "ember/core/Allocator.h"
#include "ember/core/SharedMemory.h"
#include "ember/python/PyInterop.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace ember::python {
namespace {

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

const void* storage_data(const Tensor& t) { return t.unsafeGetTensorImpl()->storage()->data(); }

int shm_fd_of(const Tensor& t) {
  shm::BlockInfo info;
  return shm::lookup(storage_data(t), &info) ? info.fd : -1;
}

// Moves t's storage (shared by all its views) into the block that
// make(nbytes, contents) returns holding a copy of its bytes.
// Other threads run meanwhile: a process that sends tensors also serves their
// descriptors to receivers from a thread (multiprocessing's resource sharer).
template <typename Make>
void move_storage(const Tensor& t, Make make) {
  EMBER_CHECK(t.device().is_cpu(), "share_memory_: only CPU tensors are supported");
  StorageImpl* s = t.unsafeGetTensorImpl()->storage().get();
  DataPtr data;
  std::exception_ptr error;
  Py_BEGIN_ALLOW_THREADS try { data = make(s->nbytes(), s->data()); } catch (...) {
    error = std::current_exception();
  }
  Py_END_ALLOW_THREADS if (error) std::rethrow_exception(error);
  s->set_data_ptr(std::move(data));
}

// Maps a block with the GIL released (see move_storage).
template <typename Map>
DataPtr map_without_gil(Map map) {
  DataPtr data;
  std::exception_ptr error;
  Py_BEGIN_ALLOW_THREADS try { data = map(); } catch (...) {
    error = std::current_exception();
  }
  Py_END_ALLOW_THREADS if (error) std::rethrow_exception(error);
  return data;
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

// _set_tensor_storage(self, source, offset, size, stride): self now views source's storage (Tensor.set_).
PyObject* py_set_tensor_storage(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  PyObject *self, *source, *size, *stride;
  long long offset;
  if (!PyArg_ParseTuple(args, "OOLOO", &self, &source, &offset, &size, &stride)) return nullptr;
  TensorImpl* dst = tensor_arg(self).unsafeGetTensorImpl();
  const Storage& storage = tensor_arg(source).unsafeGetTensorImpl()->storage();
  std::vector<int64_t> sizes = int_list(size, "size must be a sequence of ints");
  std::vector<int64_t> strides = int_list(stride, "stride must be a sequence of ints");
  EMBER_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  EMBER_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  for (int64_t s : sizes) EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s);
  check_in_bounds_for_storage(sizes, strides, offset, dst->itemsize(), storage->nbytes());
  dst->set_storage(storage);
  dst->set_sizes_and_strides(sizes, strides, offset);
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

// _resize_tensor_(self, size, stride): new sizes and strides at the same offset, the storage grown (never
// shrunk) to hold them (Tensor.resize_).
PyObject* py_resize_tensor(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  PyObject *self, *size, *stride;
  if (!PyArg_ParseTuple(args, "OOO", &self, &size, &stride)) return nullptr;
  TensorImpl* impl = tensor_arg(self).unsafeGetTensorImpl();
  std::vector<int64_t> sizes = int_list(size, "size must be a sequence of ints");
  std::vector<int64_t> strides = int_list(stride, "stride must be a sequence of ints");
  EMBER_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  for (int64_t n : sizes) EMBER_CHECK(n >= 0, "Trying to create tensor with negative dimension ", n);
  // Checked byte counts (Note [Checked sizes]): a wrapped product must not shrink the storage asked for.
  size_t needed = storage_nbytes(sizes, strides, impl->itemsize());
  if (needed > 0) needed = checked_add_bytes(needed, impl->storage_offset() * impl->itemsize(), sizes);
  const Storage& storage = impl->storage();
  if (needed > storage->nbytes()) storage->resize(needed);
  impl->set_sizes_and_strides(sizes, strides, impl->storage_offset());
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

// _shm_new(nbytes) -> (uint8 tensor over a new shared block, its fd)
PyObject* py_shm_new(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) throw python_error();
  EMBER_CHECK(n >= 0, "negative size");
  DataPtr data = shm::new_fd_block(static_cast<size_t>(n));
  shm::BlockInfo info;
  shm::lookup(data.get(), &info);
  Tensor t = bytes_tensor(make_intrusive<StorageImpl>(std::move(data), static_cast<size_t>(n)));
  PyObject* obj = wrap(t);
  return Py_BuildValue("(Ni)", obj, info.fd);
  EMBER_PY_CATCH
}

// _shm_map(fd, nbytes, keep_fd=False, populate=True) -> uint8 tensor over the
// block behind fd. The caller keeps (and closes) fd; the mapping stays valid
// after that. With keep_fd the block keeps a duplicate, so that it can be sent
// on; without populate the pages are mapped as they are touched.
PyObject* py_shm_map(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  int fd;
  long long n;
  int keep = 0, populate = 1;
  if (!PyArg_ParseTuple(args, "iL|pp", &fd, &n, &keep, &populate)) return nullptr;
  EMBER_CHECK(n >= 0, "negative size");
  DataPtr data =
      map_without_gil([&] { return shm::map_fd_block(fd, static_cast<size_t>(n), keep != 0, populate != 0); });
  return wrap(bytes_tensor(make_intrusive<StorageImpl>(std::move(data), static_cast<size_t>(n))));
  EMBER_PY_CATCH
}

// _shm_open_named(name, nbytes) -> uint8 tensor over the named segment.
PyObject* py_shm_open_named(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  const char* name;
  long long n;
  if (!PyArg_ParseTuple(args, "sL", &name, &n)) return nullptr;
  EMBER_CHECK(n >= 0, "negative size");
  std::string segment(name);
  DataPtr data = map_without_gil([&] { return shm::open_named_block(segment, static_cast<size_t>(n)); });
  return wrap(bytes_tensor(make_intrusive<StorageImpl>(std::move(data), static_cast<size_t>(n))));
  EMBER_PY_CATCH
}

// _shm_fd(t) -> the fd this process keeps for t's shared block, or -1.
PyObject* py_shm_fd(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  return PyLong_FromLong(shm_fd_of(tensor_arg(arg)));
  EMBER_PY_CATCH
}

// _share_memory_(t): moves t's storage into a new shared block unless it is
// in one already.
PyObject* py_share_memory(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  const Tensor& t = tensor_arg(arg);
  if (!shm::lookup(storage_data(t), nullptr)) move_storage(t, shm::new_fd_block);
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

// _share_fd_(t) -> the fd of t's storage, moved first into a block behind a
// memory file unless this process keeps one for it.
PyObject* py_share_fd(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  const Tensor& t = tensor_arg(arg);
  int fd = shm_fd_of(t);
  if (fd < 0) {
    move_storage(t, shm::new_fd_block);
    fd = shm_fd_of(t);
  }
  return PyLong_FromLong(fd);
  EMBER_PY_CATCH
}

// _share_filename_(t) -> the name of t's storage's segment, moved first into
// a named segment unless it is in one.
PyObject* py_share_filename(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  const Tensor& t = tensor_arg(arg);
  shm::BlockInfo info;
  if (!shm::lookup(storage_data(t), &info) || info.name.empty()) {
    move_storage(t, shm::new_named_block);
    shm::lookup(storage_data(t), &info);
  }
  return PyUnicode_FromStringAndSize(info.name.data(), static_cast<Py_ssize_t>(info.name.size()));
  EMBER_PY_CATCH
}

// _shm_add_ref(t, delta) -> whether t's storage is a named segment, whose
// count then changed by delta (a reference held by a message in transit).
PyObject* py_shm_add_ref(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  PyObject* obj;
  int delta;
  if (!PyArg_ParseTuple(args, "Oi", &obj, &delta)) return nullptr;
  return PyBool_FromLong(shm::named_block_add_ref(storage_data(tensor_arg(obj)), delta));
  EMBER_PY_CATCH
}

PyObject* py_is_shared(PyObject*, PyObject* arg) {
  EMBER_PY_TRY
  return PyBool_FromLong(shm::lookup(storage_data(tensor_arg(arg)), nullptr));
  EMBER_PY_CATCH
}

PyObject* py_shm_release_all(PyObject*, PyObject*) {
  EMBER_PY_TRY
  shm::release_named_refs();
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyObject* py_shm_sweep(PyObject*, PyObject*) {
  EMBER_PY_TRY
  shm::sweep_dead_families();
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyMethodDef storage_functions[] = {{"_storage_info", py_storage_info, METH_O, nullptr},
                                   {"_storage_bytes", py_storage_bytes, METH_O, nullptr},
                                   {"_tensor_on_storage", py_tensor_on_storage, METH_VARARGS, nullptr},
                                   {"_set_tensor_storage", py_set_tensor_storage, METH_VARARGS, nullptr},
                                   {"_resize_tensor_", py_resize_tensor, METH_VARARGS, nullptr},
                                   {"_shm_new", py_shm_new, METH_O, nullptr},
                                   {"_shm_map", py_shm_map, METH_VARARGS, nullptr},
                                   {"_shm_open_named", py_shm_open_named, METH_VARARGS, nullptr},
                                   {"_shm_fd", py_shm_fd, METH_O, nullptr},
                                   {"_share_fd_", py_share_fd, METH_O, nullptr},
                                   {"_share_filename_", py_share_filename, METH_O, nullptr},
                                   {"_shm_add_ref", py_shm_add_ref, METH_VARARGS, nullptr},
                                   {"_shm_sweep", py_shm_sweep, METH_NOARGS, nullptr},
                                   {"_shm_release_all", py_shm_release_all, METH_NOARGS, nullptr},
                                   {"_share_memory_", py_share_memory, METH_O, nullptr},
                                   {"_is_shared", py_is_shared, METH_O, nullptr},
                                   {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_storage(PyObject* module) {
  if (PyModule_AddFunctions(module, storage_functions) < 0) throw python_error();
}

}  // namespace ember::python
