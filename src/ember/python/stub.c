/* ember._C: the extension module Python loads. All of it lives in
 * libember_python.so, found through this file's RUNPATH ($ORIGIN/lib). */
#include <Python.h>

extern PyObject* ember_python_PyInit__C(void);

PyMODINIT_FUNC PyInit__C(void) { return ember_python_PyInit__C(); }
