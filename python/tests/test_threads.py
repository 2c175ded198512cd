"""One open index searched from several Python threads at once: the
library allows it (an opened genie_index is read-only) and the GIL is
released during each search, so the answers must equal the serial ones;
close() waits for the searches in flight."""
import threading
import time

import numpy as np

import genie
from conftest import backend


def test_concurrent_searches_equal_serial(tmp_path):
    rng = np.random.default_rng(1)
    n, L = 20000, 16
    objects = rng.integers(0, 5000, size=(n, L), dtype=np.uint32)
    idx = genie.build_keywords(objects, tmp_path / "t.genie")
    xb = rng.standard_normal((2000, 16)).astype(np.float32)
    vidx = genie.VectorIndex.build(xb, tmp_path / "v.genie", m=32)
    batches = [rng.integers(0, 5000, size=(200, 8), dtype=np.uint32) for _ in range(8)]
    serial = [idx.search(b, k=10, backend=backend()) for b in batches]
    vserial = vidx.search(xb[:100], 5, backend=backend())
    results, errors = [None] * len(batches), []

    def work(i):
        try:
            for _ in range(3):
                results[i] = idx.search(batches[i], k=10, backend=backend())
                D, I = vidx.search(xb[:100], 5, backend=backend())
                np.testing.assert_array_equal(I, vserial[1])
        except Exception as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for got, want in zip(results, serial):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    idx.close()
    vidx.close()


def test_close_waits_for_searches(tmp_path):
    rng = np.random.default_rng(2)
    idx = genie.build_keywords(rng.integers(0, 1000, size=(50000, 20), dtype=np.uint32), tmp_path / "w.genie")
    queries = rng.integers(0, 1000, size=(20000, 10), dtype=np.uint32)
    want = idx.search(queries[:10], k=5)
    out = {}

    def search():
        out["r"] = idx.search(queries, k=5)

    t = threading.Thread(target=search)
    t.start()
    for _ in range(100000):  # until the search holds the index (bounded)
        if idx._active or not t.is_alive():
            break
        time.sleep(0.0001)
    idx.close()  # waits: must not unmap the index under the running search
    t.join()
    np.testing.assert_array_equal(out["r"][1][:10], want[1])
