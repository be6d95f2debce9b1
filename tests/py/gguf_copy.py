"""What the test scripts that rewrite a GGUF file with the gguf package share: a writer holding every key of a reader's
file in its order (`replace`: {key: (value, GGUFValueType)} written in place of the file's value), and writing it
out."""
from gguf import GGUFReader, GGUFValueType, GGUFWriter


def writer_with_metadata(r: GGUFReader, dst: str, replace=None) -> GGUFWriter:
    arch = r.get_field("general.architecture").contents()
    w = GGUFWriter(dst, arch)
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        if replace and name in replace:
            w.add_key_value(name, *replace[name])
            continue
        vt = field.types[0]
        if vt == GGUFValueType.ARRAY:
            w.add_array(name, field.contents())
        else:
            w.add_key_value(name, field.contents(), vt)
    return w


def write_out(w: GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def numpy_shape(t) -> list:
    """gguf-py's shapes are GGUF order (ne0 first); numpy's are the reverse."""
    return list(reversed([int(x) for x in t.shape]))
