"""The journal of a batch run (rundir/batch_journal.py): what it holds is
read back as it was written; a torn last line (a crash mid-write) is cut
off and a damaged one left out with a warning; an adopted batch found not
to be the run's gives its intent's requests back."""

from __future__ import annotations

from trunchbull.rundir.batch_journal import BatchJournal, read_journal

REF = {"version": 2, "id": "batch_1", "provider": "openai.batch"}


def test_what_is_written_is_read_back(tmp_path):
    path = tmp_path / "batches.jsonl"
    journal = BatchJournal(path, read_journal(path))
    nonce = journal.nonce
    journal.add({"e": "intent", "intent": 1, "at": 10.0, "requests": ["a-0-0", "b-0-0"]})
    journal.add({"e": "batch", "intent": 1, "ref": REF, "at": 11.0, "adopted": False})
    journal.add({"e": "intent", "intent": 2, "at": 12.0, "requests": ["c-0-0"]})
    journal.add({"e": "item", "batch": "batch_1", "id": "b-0-0", "status": "failed", "error": {"message": "x"}})
    journal.add({"e": "step", "batch": "batch_1", "id": "a-0-0", "step": {"saved": {}, "next": []}})
    journal.close()
    state = read_journal(path)
    assert state.nonce == nonce and state.next_intent() == 3
    assert state.refs == {"batch_1": REF} and state.intents[1].batch == "batch_1"
    assert [i.number for i in state.open_intents()] == [2]  # its create's outcome is unknown
    assert state.live() == ["batch_1"] and set(state.items) == {"b-0-0"} and set(state.steps) == {"a-0-0"}
    again = BatchJournal(path, state)  # reopened: the same nonce, no second `run` line
    again.add({"e": "read", "batch": "batch_1"})
    again.close()
    assert path.read_bytes().count(b'"e":"run"') == 1 and read_journal(path).live() == []


def test_a_torn_last_line_is_cut_off_and_a_damaged_one_left_out(tmp_path, capsys):
    path = tmp_path / "batches.jsonl"
    journal = BatchJournal(path, read_journal(path))
    journal.add({"e": "intent", "intent": 1, "at": 1.0, "requests": ["a-0-0"]})
    journal.close()
    with open(path, "ab") as f:
        f.write(b'{"e": "batch", "intent": 9, "ref": {}}\n')  # out of place: no intent 9
        f.write(b"not json\n")
        f.write(b'{"e": "batch", "intent": 1, "ref": {"id": "b')  # torn
    state = read_journal(path)
    assert state.refs == {} and [i.number for i in state.open_intents()] == [1]
    assert path.read_bytes().endswith(b"not json\n")  # the torn line is gone
    err = capsys.readouterr().err
    assert "batches.jsonl:4: not a journal line; left out" in err and ":3: a journal line out of place" in err


def test_a_foreign_batch_gives_its_intent_back(tmp_path):
    path = tmp_path / "batches.jsonl"
    journal = BatchJournal(path, read_journal(path))
    journal.add({"e": "intent", "intent": 1, "at": 1.0, "requests": ["a-0-0"]})
    journal.add({"e": "batch", "intent": 1, "ref": REF, "at": 2.0, "adopted": True})
    assert journal.state.adopted == {"batch_1"}
    journal.add({"e": "foreign", "batch": "batch_1"})
    journal.close()
    state = read_journal(path)
    assert state.refs == {} and state.live() == []
    (intent,) = state.intents.values()
    assert intent.abandoned and intent.batch is None and state.open_intents() == []
