import gc

from allocation.engine.gcpause import paused_gc


def test_paused_gc_pauses_and_resumes():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost block resumes it
    assert gc.isenabled()


def test_paused_gc_resumes_after_an_error():
    try:
        with paused_gc():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_paused_gc_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
