// lazytorch._C.argsort_order: torch's order among ties for an unstable sort, topk and
// kthvalue, for the reference.
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
                          bool descending, int order, int64_t k, bool sorted) {
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
            if (order == lt::kSortOrder)
                lt::introsort_indices<T>(in + r * n, 1, idx, n, descending);
            else
                lt::select_indices<T>(in + r * n, 1, idx, n, descending, order, k, sorted);
        }
    }
    return out;
}

py::array_t<int64_t> argsort_order(py::array x, bool descending, int order, int64_t k,
                                   bool sorted) {
    if (order != lt::kSortOrder && order != lt::kTopk && order != lt::kKth)
        throw py::value_error("argsort_order: order must be 1 (sort), 2 (topk) or 3 (kthvalue)");
    const int64_t n = x.ndim() ? x.shape(x.ndim() - 1) : 1;
    if (order != lt::kSortOrder && (k < 0 || k > n || (order == lt::kKth && k < 1 && n > 0)))
        throw py::value_error("argsort_order: k out of range for rows of this length");
    if (py::isinstance<py::array_t<double>>(x)) return rows<double>(x, descending, order, k, sorted);
    if (py::isinstance<py::array_t<float>>(x)) return rows<float>(x, descending, order, k, sorted);
    if (py::isinstance<py::array_t<int64_t>>(x)) return rows<int64_t>(x, descending, order, k, sorted);
    throw py::type_error("argsort_order: expected a float64, float32 or int64 array");
}

}  // namespace

void register_sort(py::module_& m) {
    m.def("argsort_order", &argsort_order, py::arg("x"), py::arg("descending"), py::arg("order"),
          py::arg("k"), py::arg("sorted"),
          "The last axis's indices permuted as torch's CPU sort (order 1), topk (2: the first "
          "k are its result) or kthvalue (3: index k - 1) leaves them (lazytorch_sort.h).");
}
