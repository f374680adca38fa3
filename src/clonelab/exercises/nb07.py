"""Exercise checks for notebook 07, measuring memory."""

from __future__ import annotations


from clonelab.exercises import exercise, whole_number


@exercise("07.1", hint="measure() a clone of that tensor and read m.allocated; "
                       "a clone allocates numel() * element_size() bytes")
def _clone_bytes_fp16(answer):
    value = whole_number(answer)
    if value is None:
        return "give a whole number of bytes, an int"
    if value == 200:
        return True
    if value == 100:
        return "that is the number of elements; how many bytes does each float16 element take?"
    if value == 400:
        return "that would be float32; the tensor is float16"
    return False


def _cases():
    """Tensors of every kind a clone meets: contiguous, views, gaps, stride 0, empty, other dtypes."""
    import torch

    big = torch.ones(100, 100)
    return [
        torch.ones(7),
        torch.ones(3, 5, dtype=torch.float64),
        big[:2],                                  # a view: 2 rows of a 40,000-byte storage
        big[10:20, 5:50],                         # a view with gaps between its rows
        big[:, ::3],                              # not dense
        torch.ones(8, 8).t(),                     # transposed, still dense
        torch.ones(1).expand(1000),               # stride 0: 4 bytes of storage, 1000 elements
        torch.arange(24, dtype=torch.int8).view(2, 3, 4).permute(2, 0, 1),
        torch.zeros(0, 3),                        # no elements
        torch.tensor(2.5),                        # 0-d
        torch.ones(4, 4, dtype=torch.bool),
    ]


@exercise("07.2", hint="count the elements the tensor shows and the bytes each one takes in the tensor's dtype; "
                       "how they are laid out in storage does not matter")
def _clone_cost(answer):
    if not callable(answer):
        return "answer should be the function clone_cost itself (no parentheses)"
    for t in _cases():
        expected = t.numel() * t.element_size()
        got = whole_number(answer(t))
        if got is None:
            return "clone_cost(t) should return a whole number of bytes"
        if got == expected:
            continue
        if got == t.numel():
            return "that counts elements; a clone allocates bytes"
        if got == t.numel() * 4:
            return (f"4 bytes per element is right for float32 only; this tensor is {t.dtype}, "
                    "whose elements take a different number of bytes")
        if got == t.untyped_storage().nbytes():
            return ("for a view or an expanded tensor the storage is not what gets copied: "
                    "try torch.ones(100, 100)[:2] and torch.ones(1).expand(1000) under measure()")
        return False
    return True


@exercise("07.3", hint="measure() both variants and subtract; then compare saved_for_backward(...).nbytes")
def _residual_extra(answer):
    if not isinstance(answer, dict) or set(answer) != {"allocated", "saved"}:
        return 'answer should be a dict with exactly the keys "allocated" and "saved"'
    allocated, saved = whole_number(answer["allocated"]), whole_number(answer["saved"])
    if allocated is None or saved is None:
        return "both values should be whole numbers of bytes (ints)"
    right_alloc = allocated == 4 * 16 * 64 * 64 * 4
    right_saved = saved == 0
    if right_alloc and right_saved:
        return True
    if right_alloc:
        return "the allocation is right; now count what each variant keeps for backward"
    if right_saved:
        return "the saved bytes are right; now compare what the two forward passes allocate"
    return False
