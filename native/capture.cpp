// capture_key(roots): the cache-hit half of lazytorch.ir.program.capture, in C++.
//
// Every materialization walks the pending graph to find the program's parameters and its
// cache key. In Python that walk costs ~1.5 us per node, so a program of 20 kernels (~140
// nodes) spent ~200 us finding a program it already had. This walk visits the nodes in
// exactly the order of the Python one (post-order, inputs left to right, duplicates
// skipped), returns the same parameters and node order, and instead of a tuple of
// (struct_hash, wiring) entries folds the same sequence into a 128-bit hash (two independent
// 64-bit lanes), as Lazy Tensor Core keys its graph cache by a 128-bit hash.
//
// Node is a __slots__ class: its attributes are read at the offsets its member descriptors
// give, which is what attribute access does after a type lookup, minus the lookup.
#include <Python.h>
#include <pybind11/pybind11.h>
#include <structmember.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace py = pybind11;

namespace {

// Offsets of the slots capture reads, for one exact type (Node).
struct NodeLayout {
    PyTypeObject* type = nullptr;
    Py_ssize_t buffer = -1, inputs = -1, struct_hash = -1;
};

Py_ssize_t slot_offset(PyTypeObject* type, const char* name) {
    PyObject* d = PyDict_GetItemString(type->tp_dict, name);  // borrowed
    if (d == nullptr || !PyObject_TypeCheck(d, &PyMemberDescr_Type)) return -1;
    PyMemberDef* m = reinterpret_cast<PyMemberDescrObject*>(d)->d_member;
    return m->type == T_OBJECT_EX ? m->offset : -1;
}

NodeLayout& layout_for(PyTypeObject* type) {
    static NodeLayout cached;
    if (cached.type != type) {
        NodeLayout l;
        l.type = type;
        l.buffer = slot_offset(type, "buffer");
        l.inputs = slot_offset(type, "inputs");
        l.struct_hash = slot_offset(type, "struct_hash");
        if (l.buffer < 0 || l.inputs < 0 || l.struct_hash < 0)
            throw py::type_error("capture_key: roots must be lazytorch Node objects");
        cached = l;
    }
    return cached;
}

PyObject* slot(PyObject* obj, Py_ssize_t offset, const char* name) {
    PyObject* v = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
    if (v == nullptr) throw py::attribute_error(std::string("Node has no attribute ") + name);
    return v;  // borrowed
}

// Two independent 64-bit lanes of a multiply-xorshift mix.
struct Hash128 {
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full;
    void add(uint64_t v) {
        a = (a ^ v) * 0xff51afd7ed558ccdull;
        a ^= a >> 32;
        b = (b + v) * 0xc4ceb9fe1a85ec53ull;
        b ^= b >> 29;
    }
    static uint64_t finish(uint64_t h) {
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ull;
        return h ^ (h >> 33);
    }
};

enum Tag : uint64_t { kParam = 1, kNode = 2, kRoots = 3 };

// Node -> its number in the walk: open addressing with linear probing over pointer keys
// (about twice as fast as std::unordered_map here, which allocates a node per entry).
class IdMap {
   public:
    IdMap() : keys_(512, nullptr), vals_(512, 0) {}
    int64_t find(PyObject* k) const {  // -1 if absent
        for (size_t i = slot(k);; i = (i + 1) & (keys_.size() - 1)) {
            if (keys_[i] == k) return vals_[i];
            if (keys_[i] == nullptr) return -1;
        }
    }
    void insert(PyObject* k, int64_t v) {  // k must be absent
        if (2 * (size_ + 1) > keys_.size()) grow();
        size_t i = slot(k);
        while (keys_[i] != nullptr) i = (i + 1) & (keys_.size() - 1);
        keys_[i] = k;
        vals_[i] = v;
        ++size_;
    }
    size_t size() const { return size_; }

   private:
    size_t slot(PyObject* k) const {
        uint64_t h = uint64_t(reinterpret_cast<uintptr_t>(k)) * 0x9e3779b97f4a7c15ull;
        return size_t(h >> 32) & (keys_.size() - 1);
    }
    void grow() {
        std::vector<PyObject*> keys(keys_.size() * 2, nullptr);
        std::vector<int64_t> vals(keys.size(), 0);
        keys.swap(keys_);
        vals.swap(vals_);
        size_ = 0;
        for (size_t i = 0; i < keys.size(); ++i)
            if (keys[i] != nullptr) insert(keys[i], vals[i]);
    }
    std::vector<PyObject*> keys_;
    std::vector<int64_t> vals_;
    size_t size_ = 0;
};

py::tuple capture_key(const py::sequence& roots_seq) {
    const Py_ssize_t n_roots = py::len(roots_seq);
    std::vector<PyObject*> roots(static_cast<size_t>(n_roots));
    for (Py_ssize_t i = 0; i < n_roots; ++i) roots[size_t(i)] = roots_seq[i].ptr();
    py::list params, order;
    if (n_roots == 0) return py::make_tuple(py::make_tuple(0, 0), params, order);
    const NodeLayout lay = layout_for(Py_TYPE(roots[0]));

    IdMap ids;
    Hash128 h;
    // An iterative post-order walk: each frame scans its node's inputs left to right and
    // descends into the first one not numbered yet, so every input is looked up once on
    // the way down and once for the wiring (the same order as pushing all missing inputs,
    // with half the lookups).
    struct Frame {
        PyObject* node;
        PyObject* inputs;  // borrowed: the node holds it
        uint64_t hash;
        Py_ssize_t next;
    };
    std::vector<Frame> stack;
    stack.reserve(64);
    // A parameter (a computed value) is numbered at once; a pending node gets a frame.
    auto enter = [&](PyObject* n) {
        if (Py_TYPE(n) != lay.type) throw py::type_error("capture_key: a graph input is not a Node");
        PyObject* struct_hash = slot(n, lay.struct_hash, "struct_hash");
        const uint64_t sh = uint64_t(PyLong_AsLongLong(struct_hash));
        if (sh == uint64_t(-1) && PyErr_Occurred()) throw py::error_already_set();
        if (slot(n, lay.buffer, "buffer") != Py_None) {
            ids.insert(n, int64_t(ids.size()));
            if (PyList_Append(params.ptr(), n) < 0) throw py::error_already_set();
            h.add(kParam);
            h.add(sh);
            return;
        }
        PyObject* inputs = slot(n, lay.inputs, "inputs");
        if (!PyTuple_Check(inputs)) throw py::type_error("capture_key: Node.inputs is not a tuple");
        stack.push_back(Frame{n, inputs, sh, 0});
    };
    for (PyObject* root : roots) {
        if (ids.find(root) >= 0) continue;
        enter(root);
        while (!stack.empty()) {
            Frame& f = stack.back();
            const Py_ssize_t k = PyTuple_GET_SIZE(f.inputs);
            PyObject* down = nullptr;
            while (f.next < k) {
                PyObject* in = PyTuple_GET_ITEM(f.inputs, f.next++);
                if (ids.find(in) < 0) {
                    down = in;
                    break;
                }
            }
            if (down != nullptr) {
                enter(down);  // may grow the stack: `f` is not used after this
                continue;
            }
            PyObject* n = f.node;
            PyObject* inputs = f.inputs;
            const uint64_t sh = f.hash;
            stack.pop_back();
            ids.insert(n, int64_t(ids.size()));
            if (PyList_Append(order.ptr(), n) < 0) throw py::error_already_set();
            h.add(kNode);
            h.add(sh);
            h.add(uint64_t(k));
            for (Py_ssize_t i = 0; i < k; ++i) h.add(uint64_t(ids.find(PyTuple_GET_ITEM(inputs, i))));
        }
    }
    h.add(kRoots);
    h.add(uint64_t(n_roots));
    for (PyObject* r : roots) h.add(uint64_t(ids.find(r)));
    py::tuple key = py::make_tuple(Hash128::finish(h.a), Hash128::finish(h.b));
    return py::make_tuple(key, params, order);
}

}  // namespace

void register_capture(py::module_& m) {
    m.def("capture_key", &capture_key, py::arg("roots"),
          "Walk the graph below `roots` like lazytorch.ir.program.capture: returns (key, "
          "params, order), key a 128-bit hash of the structural hashes and wiring.");
}
