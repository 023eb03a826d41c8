// lazytorch._C.philox_words: the integer half of the interpreter's random draws.
//
// lazytorch/ir/philox.py is the reference: Philox4x32-10 over the 64-bit counters
// offset + i (low word, high word, 0, 0) under the key seed (low, high). In NumPy each of the
// ten rounds is a dozen whole-array operations, which for the small draws of an eager-style
// loop (randn(32) per step) costs ~0.3 ms of call overhead against torch's microseconds. This
// computes the same words (r0, r1: the two a draw uses) in one pass; the float arithmetic
// (Box-Muller's log and cos) stays in NumPy, so a draw is the reference's bit for bit.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace py = pybind11;

namespace {

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;

// Words r0 and r1 of counters offset .. offset + numel - 1 (wrapping at 2**64), as a
// (2, numel) uint32 array.
py::array_t<uint32_t> philox_words(int64_t numel, uint64_t seed, uint64_t offset) {
    if (numel < 0) throw std::invalid_argument("philox_words: numel must be >= 0");
    py::array_t<uint32_t> out({int64_t(2), numel});
    uint32_t* r0 = static_cast<uint32_t*>(out.request().ptr);  // C-contiguous, fresh
    uint32_t* r1 = r0 + numel;
    const uint32_t key0 = uint32_t(seed), key1 = uint32_t(seed >> 32);
    {
        py::gil_scoped_release release;
        for (int64_t i = 0; i < numel; ++i) {
            const uint64_t counter = offset + uint64_t(i);
            uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
            uint32_t k0 = key0, k1 = key1;
            for (int r = 0; r < 10; ++r) {
                const uint64_t p0 = uint64_t(kM0) * c0, p1 = uint64_t(kM1) * c2;
                const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
                const uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
                c1 = uint32_t(p1);
                c3 = uint32_t(p0);
                c0 = n0;
                c2 = n2;
                k0 += kW0;
                k1 += kW1;
            }
            r0[i] = c0;
            r1[i] = c1;
        }
    }
    return out;
}

}  // namespace

void register_philox(py::module_& m) {
    m.def("philox_words", &philox_words, py::arg("numel"), py::arg("seed"), py::arg("offset"),
          "Philox4x32-10 words r0, r1 of counters offset + i, as a (2, numel) uint32 array "
          "(lazytorch/ir/philox.py is the reference).");
}
