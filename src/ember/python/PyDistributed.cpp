// ember._C._distributed: stores, process groups and Work handles for
// ember.distributed. Blocking calls release the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/distributed/ProcessGroup.h"
#include "ember/distributed/Store.h"
#include "ember/python/PyNanobind.h"

namespace nb = nanobind;

namespace ember::python {

namespace {

using namespace ember::distributed;

PyObject* g_dist_error = nullptr;
PyObject* g_dist_backend_error = nullptr;
PyObject* g_dist_store_error = nullptr;
PyObject* g_dist_network_error = nullptr;

Bytes to_bytes(nb::handle v) {
  if (PyBytes_Check(v.ptr())) {
    const char* p = PyBytes_AS_STRING(v.ptr());
    return Bytes(p, p + PyBytes_GET_SIZE(v.ptr()));
  }
  if (PyUnicode_Check(v.ptr())) {
    Py_ssize_t n;
    const char* p = PyUnicode_AsUTF8AndSize(v.ptr(), &n);
    if (!p) throw nb::python_error();
    return Bytes(p, p + n);
  }
  throw TypeError("expected str or bytes");
}

nb::bytes from_bytes(const Bytes& b) { return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

Millis to_millis(double seconds) { return Millis(static_cast<int64_t>(seconds * 1000.0)); }

PyObject* new_error(nb::module_& m, const char* name, PyObject* base) {
  std::string full = std::string("ember.distributed.") + name;
  PyObject* cls = PyErr_NewException(full.c_str(), base, nullptr);
  if (!cls) throw nb::python_error();
  PyModule_AddObject(m.ptr(), name, cls);
  Py_INCREF(cls);
  return cls;
}

}  // namespace

void init_distributed(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_distributed");
  // A process group may outlive the interpreter's shutdown (as in c10d, where
  // destroy_process_group is optional); that is not a leak worth reporting.
  nb::set_leak_warnings(false);
  g_dist_error = new_error(m, "DistError", PyExc_RuntimeError);
  g_dist_backend_error = new_error(m, "DistBackendError", g_dist_error);
  g_dist_store_error = new_error(m, "DistStoreError", g_dist_error);
  g_dist_network_error = new_error(m, "DistNetworkError", g_dist_error);
  // Registered after the general translator, so it is asked first.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const DistBackendError& e) {
      PyErr_SetString(g_dist_backend_error, e.what());
    } catch (const DistStoreError& e) {
      PyErr_SetString(g_dist_store_error, e.what());
    } catch (const DistNetworkError& e) {
      PyErr_SetString(g_dist_network_error, e.what());
    } catch (const DistError& e) {
      PyErr_SetString(g_dist_error, e.what());
    }
  });

  nb::class_<Store>(m, "Store")
      .def("set",
           [](Store& s, const std::string& k, nb::handle v) {
             Bytes b = to_bytes(v);
             nb::gil_scoped_release g;
             s.set(k, b);
           })
      .def("get",
           [](Store& s, const std::string& k) {
             Bytes b;
             {
               nb::gil_scoped_release g;
               b = s.get(k);
             }
             return from_bytes(b);
           })
      .def("add",
           [](Store& s, const std::string& k, int64_t v) {
             nb::gil_scoped_release g;
             return s.add(k, v);
           })
      .def("compare_set",
           [](Store& s, const std::string& k, nb::handle expected, nb::handle desired) {
             Bytes e = to_bytes(expected), d = to_bytes(desired), r;
             {
               nb::gil_scoped_release g;
               r = s.compare_set(k, e, d);
             }
             return from_bytes(r);
           })
      .def("check",
           [](Store& s, const std::vector<std::string>& keys) {
             nb::gil_scoped_release g;
             return s.check(keys);
           })
      .def("delete_key",
           [](Store& s, const std::string& k) {
             nb::gil_scoped_release g;
             return s.delete_key(k);
           })
      .def("num_keys",
           [](Store& s) {
             nb::gil_scoped_release g;
             return s.num_keys();
           })
      .def("_wait",
           [](Store& s, const std::vector<std::string>& keys, std::optional<double> timeout) {
             nb::gil_scoped_release g;
             if (timeout) {
               s.wait(keys, to_millis(*timeout));
             } else {
               s.wait(keys);
             }
           })
      .def("_timeout_seconds", [](Store& s) { return s.timeout().count() / 1000.0; })
      .def("_set_timeout_seconds", [](Store& s, double t) { s.set_timeout(to_millis(t)); });

  nb::class_<HashStore, Store>(m, "HashStore").def(nb::init<>());
  nb::class_<FileStore, Store>(m, "FileStore")
      .def(nb::init<std::string, int>())
      .def_prop_ro("path", &FileStore::path)
      .def_prop_ro("world_size", &FileStore::world_size);
  nb::class_<PrefixStore, Store>(m, "PrefixStore")
      .def(nb::init<std::string, std::shared_ptr<Store>>())
      .def_prop_ro("underlying_store", &PrefixStore::underlying_store);
  nb::class_<TCPStore, Store>(m, "TCPStore")
      .def("__init__",
           [](TCPStore* self, std::string host, int port, bool is_master, double timeout, int world_size,
              bool wait_for_workers) {
             nb::gil_scoped_release g;
             new (self) TCPStore(std::move(host), port, is_master, to_millis(timeout), world_size, wait_for_workers);
           })
      .def_prop_ro("host", &TCPStore::host)
      .def_prop_ro("port", &TCPStore::port);

  nb::class_<Work>(m, "Work")
      .def(
          "wait",
          [](Work& w, double timeout) {
            nb::gil_scoped_release g;
            return w.wait(to_millis(timeout));
          },
          nb::arg("timeout") = 0.0)
      .def("is_completed", &Work::is_completed)
      .def("is_success", &Work::is_success)
      .def("result", &Work::result)
      .def("_source_rank", &Work::source_rank)
      .def("_exception_text", [](Work& w) -> std::optional<std::string> {
        auto e = w.exception();
        if (!e) return std::nullopt;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          return std::string(x.what());
        }
      });

  nb::class_<ProcessGroup>(m, "ProcessGroup")
      .def("rank", &ProcessGroup::rank)
      .def("size", &ProcessGroup::size)
      .def("name", &ProcessGroup::backend_name)
      .def("allreduce", [](ProcessGroup& pg, Tensor t, int op) { return pg.allreduce(t, static_cast<ReduceOp>(op)); })
      .def("broadcast", &ProcessGroup::broadcast)
      .def("reduce",
           [](ProcessGroup& pg, Tensor t, int root, int op) { return pg.reduce(t, root, static_cast<ReduceOp>(op)); })
      .def("allgather", &ProcessGroup::allgather)
      .def("allgather_into", &ProcessGroup::allgather_into)
      .def("reduce_scatter", [](ProcessGroup& pg, Tensor out, Tensor in,
                                int op) { return pg.reduce_scatter(out, in, static_cast<ReduceOp>(op)); })
      .def("gather", &ProcessGroup::gather)
      .def("scatter", &ProcessGroup::scatter)
      .def(
          "alltoall",
          [](ProcessGroup& pg, Tensor out, Tensor in, std::vector<int64_t> out_splits, std::vector<int64_t> in_splits) {
            return pg.alltoall(out, in, AllToAllSplits{std::move(out_splits), std::move(in_splits)});
          })
      .def("send", &ProcessGroup::send)
      .def("recv", &ProcessGroup::recv)
      .def("recv_anysource", &ProcessGroup::recv_anysource)
      .def("barrier", &ProcessGroup::barrier);

  m.def("is_gloo_available", &gloo_available);
  m.def("is_mpi_available", &mpi_available);
  m.def("is_nccl_available", &nccl_available);
  m.def("_nccl_version", &nccl_version);
  m.def("_new_mpi_group", [](std::vector<int> ranks) {
    nb::gil_scoped_release g;
    return make_mpi_process_group(ranks);
  });
  m.def("_new_nccl_group", [](std::shared_ptr<Store> store, int rank, int size, double timeout) {
    nb::gil_scoped_release g;
    return make_nccl_process_group(std::move(store), rank, size, to_millis(timeout));
  });
  m.def("_nccl_exchange_unique_id", [](std::shared_ptr<Store> store, int rank, const std::string& key) {
    Bytes b;
    {
      nb::gil_scoped_release g;
      b = nccl_exchange_unique_id(std::move(store), rank, key);
    }
    return from_bytes(b);
  });
  m.def("_new_gloo_group", [](std::shared_ptr<Store> store, int rank, int size, double timeout) {
    nb::gil_scoped_release g;
    return make_gloo_process_group(std::move(store), rank, size, to_millis(timeout));
  });
}

}  // namespace ember::python
