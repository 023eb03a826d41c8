// lazytorch._C: the native runtime.
//
// The compiled-program executor lands here with the CPU compiler; for now the module
// reports how it was built, so `lazytorch doctor`-style checks and the import fallback
// can be exercised from the first release on.
#include <pybind11/pybind11.h>

#include <string>

namespace py = pybind11;

namespace {

std::string compiler_id() {
#if defined(__clang__)
    return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("gcc ") + __VERSION__;
#else
    return "unknown";
#endif
}

}  // namespace

PYBIND11_MODULE(_C, m) {
    m.doc() = "lazytorch native runtime";
    m.def(
        "build_info",
        []() {
            py::dict info;
            info["compiler"] = compiler_id();
            info["cplusplus"] = static_cast<long>(__cplusplus);
            info["pybind11"] = std::to_string(PYBIND11_VERSION_MAJOR) + "." +
                               std::to_string(PYBIND11_VERSION_MINOR);
            return info;
        },
        "Describe how this extension was built (compiler, C++ standard, pybind11).");
}
