// lazytorch._C.erf_f64: the reference's error function over a whole array.
//
// NumPy has no erf, so the reference (lazytorch/ir/prims/elementwise.py) calls libm's erf
// through Python's math.erf once per element: about 70 ns each, which made every model with
// an exact GELU crawl on the interpreter (the tier that runs a program while it compiles).
// This is the same libm function in one loop, so a value is the reference's bit for bit
// (tests/ops/test_special.py holds it to math.erf).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>

namespace py = pybind11;

namespace {

py::array_t<double> erf_f64(
    py::array_t<double, py::array::c_style | py::array::forcecast> x) {
    py::array_t<double> out(x.request().shape);
    const double* in = x.data();
    double* o = static_cast<double*>(out.request().ptr);  // C-contiguous, fresh
    const int64_t n = x.size();
    {
        py::gil_scoped_release release;
        for (int64_t i = 0; i < n; ++i) o[i] = std::erf(in[i]);
    }
    return out;
}

}  // namespace

void register_special(py::module_& m) {
    m.def("erf_f64", &erf_f64, py::arg("x"),
          "libm's erf of each element of a float64 array (the reference's erf, in one loop).");
}
