// lazytorch._C.argsort_unstable: torch's order for an unstable sort, for the reference.
//
// The interpreter computes `argsort(stable=False)` with the same introsort the generated
// C++ runs (codegen/include/lazytorch_sort.h, `lt::introsort_indices`), so the two backends,
// and torch's CPU sort, give the same indices among equal keys. Rows are the last axis of a
// C-contiguous array of float64, float32 or int64 (the reference widens other dtypes to one
// of these first, which keeps every comparison exact).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

#include "../codegen/include/lazytorch_sort.h"

namespace py = pybind11;

namespace {

template <class T>
py::array_t<int64_t> rows(py::array_t<T, py::array::c_style | py::array::forcecast> x,
                          bool descending) {
    py::array_t<int64_t> out(x.request().shape);
    const int64_t n = x.ndim() ? x.shape(x.ndim() - 1) : 1;
    const int64_t nrows = n ? x.size() / n : 0;
    const T* in = x.data();
    int64_t* o = static_cast<int64_t*>(out.request().ptr);  // C-contiguous, fresh
    {
        py::gil_scoped_release release;
        for (int64_t r = 0; r < nrows; ++r) {
            int64_t* idx = o + r * n;
            for (int64_t i = 0; i < n; ++i) idx[i] = i;
            lt::introsort_indices<T>(in + r * n, 1, idx, n, descending);
        }
    }
    return out;
}

py::array_t<int64_t> argsort_unstable(py::array x, bool descending) {
    if (py::isinstance<py::array_t<double>>(x)) return rows<double>(x, descending);
    if (py::isinstance<py::array_t<float>>(x)) return rows<float>(x, descending);
    if (py::isinstance<py::array_t<int64_t>>(x)) return rows<int64_t>(x, descending);
    throw py::type_error("argsort_unstable: expected a float64, float32 or int64 array");
}

}  // namespace

void register_sort(py::module_& m) {
    m.def("argsort_unstable", &argsort_unstable, py::arg("x"), py::arg("descending"),
          "torch's unstable sort order along the last axis (libstdc++'s introsort, written "
          "out in lazytorch_sort.h).");
}
