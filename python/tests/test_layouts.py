"""Every struct the package mirrors by hand (genie._lib) against the layout
the library it loaded reports (genie_struct_layouts): the same fields, in
the same order, at the same offsets and sizes, and the same struct size."""
import ctypes

from genie import _lib


def library_layouts():
    n = ctypes.c_size_t()
    table = _lib.lib.genie_struct_layouts(ctypes.byref(n))
    out = {}
    for i in range(n.value):
        e = table[i]
        fields = out.setdefault(e.type.decode(), {"size": None, "fields": []})
        if e.field is None:
            fields["size"] = e.size
        else:
            fields["fields"].append((e.field.decode(), e.offset, e.size))
    return out


def mirrored():
    return [v for k, v in vars(_lib).items()
            if k.startswith("genie_") and isinstance(v, type) and issubclass(v, ctypes.Structure)
            and k != "genie_field_layout"]


def test_every_mirrored_struct_matches_the_library():
    lib = library_layouts()
    structs = mirrored()
    assert len(structs) >= 20
    for cls in structs:
        assert cls.__name__ in lib, f"{cls.__name__}: the library reports no such struct"
        want = lib[cls.__name__]
        got = [(name, getattr(cls, name).offset, getattr(cls, name).size) for name, _ in cls._fields_]
        assert got == want["fields"], f"{cls.__name__}: mirrored {got}, the library has {want['fields']}"
        assert ctypes.sizeof(cls) == want["size"], f"{cls.__name__}: {ctypes.sizeof(cls)} bytes, the library's {want['size']}"


def test_the_check_sees_a_wrong_mirror():
    class genie_item(ctypes.Structure):  # weight missing, hi widened
        _fields_ = [("lo", ctypes.c_uint32), ("hi", ctypes.c_uint64)]
    want = library_layouts()["genie_item"]
    got = [(name, getattr(genie_item, name).offset, getattr(genie_item, name).size) for name, _ in genie_item._fields_]
    assert got != want["fields"]
