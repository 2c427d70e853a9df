"""Native TREC reader: qrels and runs parsed in C, runs ranked and joined as they stream.

The caller (``cumgain.io.native.reader``) reads the input in blocks of whole lines (a plain file
in parts by several threads, a gzip file, a stream) and feeds them here. No Python
object is made per line:

* :class:`QrelsTable` parses ``qid iter docno rel`` lines into flat arrays (levels as
  int8 while they are small whole numbers) and a hash index keyed by (topic, docno);
  once finished it is only read, so one table serves any number of rankers, in any
  number of threads (a table finished unchecked, for one ranking, is marked checked
  by RunRanker.check_unused_judgments, and release() frees one no ranking needs);
* :class:`RunRanker` parses ``qid iter docno rank score tag`` lines; when a topic's
  lines end it sorts them (score descending, then the tie rule), cuts at the depth,
  looks each document up in the qrels index and appends, per rank, the relevance
  level and whether the document is judged. Only one topic's lines are held at once;
  a topic that comes back stops it (NOT_GROUPED), and a ranker made ``grouping`` holds
  every line by topic instead (_held.pxd, about half the text) and ranks every topic
  once the input ends (in parts, by several threads), hands them out as they end
  (``take_held``, for a contiguous stream), or gives them as a loaded run's columns
  (``held_run``).

Both also take plain ``{qid: {docno: value}}`` dicts (``add_dict``); a run dict's
documents are ranked where they are, from the UTF-8 of the dict's own keys.

The parsers validate everything the pure-Python reference reader
(``cumgain.reference.reading``) validates: field counts, the number grammar, strict
UTF-8, NUL bytes, blank lines in qrels, lines longer than ``max_line_bytes``. They do
not format messages: on a bad line they stop and report ``status``, the line and where
it starts in the block (``stop_offset``), and the caller words the error from it. A
docno twice in a topic does not stop them: it is counted and the first by line named
(``first_duplicate``), and dropped by the duplicates policy. Past what the layout holds
they stop with TOO_BIG. An allocation that fails stops them with NO_MEMORY and
``failed_bytes``, which the caller raises as a MemoryError (every allocation goes through
_alloc.h). No global state: one instance per input.

The parts it is built from, each with one job, share their declarations through .pxd
files (their ``nogil`` helpers inline, so they compile into this module's loops):
_text.pxd (scanning lines into fields, the number grammar, UTF-8), _strings.pxd
(interning ids), _buffers.pxd/.pyx (growable arrays, handed to numpy without a copy),
_columns.pxd/.pyx (Arrow string columns read in place), _status.pxd (status codes and
duplicates policies), _qrels.pxd/.pyx (the qrels table and its per-topic index),
_held.pxd (a run's lines held by topic), _rank_topic.pxd (ranking and joining one topic:
the entries, the duplicates, the qrels lookup, the sort, the depth cut, the ranked
output), _run_entries.pxd (the entries of a file's lines and of Arrow columns),
_run_state.pxd (joining parts, gathering held topics ranked in parts, freeing). This
module holds the ranker and its dict entry (RunRanker.add_dict).
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t
from libc.stdlib cimport free
from libc.math cimport isnan

from cpython.dict cimport PyDict_Next, PyDict_Size
from cpython.pyport cimport PY_SSIZE_T_MAX
from cpython.ref cimport PyObject

# growable arrays and handing them to numpy
from cgcore._buffers cimport (
    _extend, _hand_over, _int64_array, _level_bytes, _level_dtype,
    _push_bytes, _push_double, _push_int64, _release, _release_int64s, cg_calloc,
    cg_set_allocation_limit, cg_take_failed_bytes)
# Arrow string columns (the columnar entry)
from cgcore._columns cimport TextColumn
# a run's lines held by topic (runs whose topics are not contiguous)
from cgcore._held cimport (
    Held, _free_slabs, _held_free, _hold_again, _hold_group, _link_group, _shift_lines,
    _take_slabs)
# the qrels table: its layout and per-topic index
from cgcore._precision cimport (PRECISION_BFLOAT16, PRECISION_FLOAT16, PRECISION_FLOAT32,
                                 PRECISION_FLOAT64, _compared_score)
from cgcore._qrels cimport QrelsState, QrelsTable, _check_topics
from cgcore._rank_keys cimport random_tie_key
# the entries that feed the ranker (a file's lines, Arrow columns) and its state
from cgcore._run_entries cimport _flush_staged, _rank_columns, _run_feed
from cgcore._run_state cimport (
    _free_state, _gather_parts, _take_duplicates, _take_following_rows, _take_tags)
# ranking and joining one topic: the entries, the sort, the qrels lookup, the output
from cgcore._rank_topic cimport (
    RULE_DOCNO_ASC, RULE_DOCNO_DESC, RULE_INPUT_ORDER, RULE_RANDOM, Entry, RunState,
    _docno_prefix, _index_entries, _kept, _load_group, _rank_batch, _rank_current,
    _rank_group, _reserve_outputs)
from cgcore._status cimport (
    BAD_LINE, DUPLICATE, KEEP_ERROR, KEEP_FIRST, KEEP_LAST, NO_MEMORY, NOT_GROUPED, OK,
    QRELS_DUPLICATE, _settled, _stop_code)
# interned strings
from cgcore._strings cimport (
    _strings_add, _strings_add_new, _strings_count, _strings_find, _strings_find_after,
    _strings_init, _strings_length, _strings_list, _strings_text)
# lines, fields, numbers, UTF-8
from cgcore._text cimport CG_SIMD, PyUnicode_CheckExact, _exact_number, _utf8


import threading

import numpy as np

cdef extern from "Python.h":
    bint PyDict_CheckExact(object o)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

# status codes
#: Whether the SSE2 line scanner is compiled in (False on non-x86 builds, MSVC, and
#: CUMGAIN_NO_SIMD=1 builds, which use the portable code).
SIMD = bool(CG_SIMD)

STATUS_OK = 0
STATUS_BAD_LINE = 1        # a malformed line (the caller words the error from it)
STATUS_DUPLICATE = 2       # a docno twice in one topic of a qrels table (finish())
STATUS_NOT_GROUPED = 3     # a run topic came back after another (not ``grouping``)
STATUS_NO_MEMORY = 4
STATUS_APPENDED = 5        # a table whose rows were appended to another: no longer usable
STATUS_QRELS_DUPLICATE = 6  # a docno twice in one topic of a table finished unchecked,
                            # found by a ranker (see QrelsTable.finish)
STATUS_RELEASED = 7         # a table whose memory was given back (QrelsTable.release)
STATUS_TOO_BIG = 8          # past what the layout holds (a qrels segment's 4 GiB of docnos,
                            # 2**32 - 2 topic ids, a topic of 2**32 documents): an error
                            # naming the limit. Running out of memory is STATUS_NO_MEMORY
                            # (failed_bytes says how much the request that failed asked for)

cdef enum:
    DICT_BATCH_DOCUMENTS = 1 << 14   # RunRanker.add_dict ranks the topics it collects in
                                     # batches of at least this many documents (or the last)
DICT_BATCH = DICT_BATCH_DOCUMENTS    # (for the tests)

# duplicates policies
DUPLICATES_ERROR = KEEP_ERROR
DUPLICATES_FIRST = KEEP_FIRST
DUPLICATES_LAST = KEEP_LAST

# tie rules
TIES_DOCNO_DESC = RULE_DOCNO_DESC
TIES_DOCNO_ASC = RULE_DOCNO_ASC
TIES_INPUT_ORDER = RULE_INPUT_ORDER
TIES_RANDOM = RULE_RANDOM
PRECISION_CODES = {"float64": PRECISION_FLOAT64, "float32": PRECISION_FLOAT32,
                   "float16": PRECISION_FLOAT16, "bfloat16": PRECISION_BFLOAT16}

from cgcore import _columns, _qrels

NO_ALLOCATION_LIMIT = <size_t>-1         # (for the tests)


def _set_allocation_limit(size_t n):
    """Make every allocation of the readers above ``n`` bytes fail as if the memory had
    run out (a test hook, see _alloc.h; SIZE_MAX: none); returns the previous limit.
    Each reader module (this one, _qrels, _columns) holds its own copy of _alloc.h's
    limit: all are set. Only between readings: the limit is shared by every thread."""
    _qrels._set_allocation_limit(n)
    _columns._set_allocation_limit(n)
    return cg_set_allocation_limit(n)


HELD_RECORDS_PER_PART = 1 << 16   # held topics are ranked by several threads in parts of
                                  # at least this many records


cdef class RunRanker:
    """Parse a run in whole-line blocks, ranking and joining each topic against
    ``qrels`` as soon as its lines end (a run whose topics are contiguous: another topic
    coming back stops it with NOT_GROUPED), or with ``grouping`` holding every line by
    topic and ranking every topic once the input ends (any order; about half the run's
    text held). Call :meth:`finish` after the last block.

    ``duplicates``: DUPLICATES_ERROR (a docno twice in a topic is counted and named, see
    :meth:`first_duplicate`, for the caller to raise), DUPLICATES_FIRST or
    DUPLICATES_LAST (the first or the last occurrence kept, the others dropped and
    counted). ``contiguous`` (with ``grouping``): a topic that comes back after another
    stops it with NOT_GROUPED, as without ``grouping``, so that topics can be handed
    out as they end (:meth:`take_held`)."""

    cdef RunState state
    cdef QrelsTable qrels
    cdef bint finished
    cdef bint handed_over
    cdef tuple rows            # the caller's (levels, judged, scores) while rows are borrowed
    cdef Py_ssize_t rows_at    # and where this ranker's rows start in them
    cdef RunState* parts       # while finish() ranks held topics in parts: their states
    cdef list part_bounds      # ... and the topics of each

    def __cinit__(self, QrelsTable qrels, int ties, int precision, int64_t depth,
                  uint64_t seed, bint keep_scores=True, Py_ssize_t max_line_bytes=-1,
                  int duplicates=KEEP_ERROR, bint grouping=False, bint contiguous=False):
        if not qrels.finished or qrels.state.status != OK:
            raise ValueError("the qrels table must be finished without error")
        if ties < RULE_DOCNO_DESC or ties > RULE_RANDOM:
            raise ValueError(f"unknown tie rule {ties}")
        if duplicates < KEEP_ERROR or duplicates > KEEP_LAST:
            raise ValueError(f"unknown duplicates policy {duplicates}")
        self.qrels = qrels
        self.state.qrels = &qrels.state
        self.state.ties = ties
        if precision < PRECISION_FLOAT64 or precision > PRECISION_BFLOAT16:
            raise ValueError(f"unknown score precision {precision}")
        self.state.precision = precision
        self.state.depth = depth
        self.state.seed = seed
        self.state.keep_scores = keep_scores
        self.state.max_line = max_line_bytes if max_line_bytes >= 0 else PY_SSIZE_T_MAX
        self.state.out_levels.wide = qrels.state.relevance.wide
        self.state.current = -1
        self.state.judgments_topic = -1
        self.state.duplicates = duplicates
        self.state.grouping = grouping
        self.state.contiguous = contiguous
        if _strings_init(&self.state.topics) != 0 or \
                _push_int64(&self.state.doc_starts, 0) != 0:
            raise MemoryError()
        self.state.topics.spread = 4    # (every held line with a topic of more than 8
                                        # bytes looks it up; shorter: short_topics)

    def __dealloc__(self):
        _free_state(&self.state)

    @property
    def grouping(self):
        """Whether every line is held by topic until :meth:`finish`."""
        return self.state.grouping

    @property
    def lines_seen(self):
        """Physical lines fed so far (comment and blank lines included)."""
        return self.state.lines_seen

    @property
    def stop_offset(self):
        """With STATUS_BAD_LINE from :meth:`feed`: where the line starts in the block."""
        return self.state.stop_offset

    @property
    def n_duplicates(self):
        """Repeated docnos found (each a row the policy drops; with DUPLICATES_ERROR,
        an error to raise)."""
        return self.state.n_duplicates

    def first_duplicate(self):
        """(topic, docno, line of its first occurrence, line of the repeat) of the first
        repeated docno by line (the repeat's line; for columns, its row + 1), or None."""
        cdef RunState* r = &self.state
        if r.n_duplicates == 0:
            return None
        return (r.topics.arena.data[r.topics.starts.data[r.duplicate_topic]:
                                    r.topics.starts.data[r.duplicate_topic + 1]].decode("utf-8"),
                r.duplicate_docno.data[:r.duplicate_docno.size].decode("utf-8")
                if r.duplicate_docno.size else "",
                r.duplicate_first_line, r.duplicate_line)

    def topic_list(self):
        """The run topics met so far, in order of first appearance."""
        return _strings_list(&self.state.topics)

    def held_run(self):
        """For a grouping ranker fed a whole run, instead of :meth:`finish`: the lines
        held, as a loaded Run's columns ``(topics, offsets, docnos, scores, lines,
        tag)``:
        topics in order of first appearance, topic t's rows ``offsets[t]:offsets[t + 1]``
        in input order, docnos an object array of str, scores float64 as the ranker
        holds them (make it with precision 0, float64, for the values as read), lines the
        int64 line of each row; a docno repeated in a topic dropped by the duplicates
        policy (and counted: :attr:`n_duplicates`, :meth:`first_duplicate`). Finishes
        the ranker; None if it stopped (see :attr:`status`)."""
        cdef RunState* r = &self.state
        cdef Held* h = &r.held
        cdef Py_ssize_t g, i, n, at = 0
        cdef Entry* entry
        if not r.grouping or self.finished or r.status != OK:
            raise ValueError("held_run needs a grouping ranker, not finished, without error")
        docnos = np.empty(h.n_records, object)
        scores = np.empty(h.n_records, np.float64)
        lines = np.empty(h.n_records, np.int64)
        offsets = np.zeros(h.n_groups + 1, np.int64)
        cdef object[:] docno_view = docnos
        cdef double[::1] score_view = scores
        cdef int64_t[::1] line_view = lines
        cdef int64_t[::1] offset_view = offsets
        self.finished = True
        cg_take_failed_bytes()
        for g in range(h.n_groups):
            with nogil:
                n = _load_group(r, h, g)
                if n >= 0:
                    n = _index_entries(r, n, True)
            if n < 0:
                _settled(&r.status, &r.failed_bytes)
                return None
            for i in range(n):
                entry = &r.entries[i]
                docno_view[at + i] = PyUnicode_DecodeUTF8(entry.docno, entry.length, NULL)
                score_view[at + i] = entry.score
                line_view[at + i] = r.lines.data[i]
            at += n
            offset_view[g + 1] = at
        with nogil:
            _held_free(h)
        tag = r.tag.data[:r.tag.size].decode("utf-8") if r.tag.size else ""
        return (_strings_list(&r.topics), offsets, docnos[:at], scores[:at], lines[:at], tag)

    @property
    def tag(self):
        """The tag of the last data line read ("" before any)."""
        return self.state.tag.data[:self.state.tag.size].decode("utf-8") \
            if self.state.tag.size else ""

    def first_line(self, str topic):
        """(grouping) The line of the first record held for ``topic``, or -1 (no such
        topic, or none of its lines held)."""
        cdef Py_ssize_t n
        cdef const char* text = _utf8(topic, &n)
        cdef int64_t index
        if text == NULL:
            return -1
        index = _strings_find(&self.state.topics, text, n)
        if index < 0 or index >= self.state.held.n_groups \
                or self.state.held.groups[index].head == NULL:
            return -1
        return self.state.held.groups[index].head.first_line

    def take_held(self, bint last=False):
        """For a grouping ranker streaming a run topic by topic (made ``contiguous``: a
        topic that comes back after another stops it with STATUS_NOT_GROUPED): every
        topic held but the one whose lines are being read (with ``last``, that one too:
        the input ended),
        each ``(topic, docnos, scores, lines)`` (an object array of str, float64, int64;
        in input order, a repeated docno dropped by the policy and counted, see
        :meth:`first_duplicate`), in order of first appearance; their memory is given
        back. None if out of memory (see :attr:`status`)."""
        cdef RunState* r = &self.state
        cdef Held* h = &r.held
        cdef Py_ssize_t g, i, n, keep = -1 if last else r.current
        cdef Entry* entry
        if not r.grouping or self.finished or r.status != OK:
            raise ValueError("take_held needs a grouping ranker, not finished, without error")
        taken = []
        cg_take_failed_bytes()
        for g in range(h.n_groups):
            if h.groups[g].taken or g == keep:
                continue
            with nogil:
                n = _load_group(r, h, g)
                if n >= 0:
                    n = _index_entries(r, n, True)
            if n < 0:
                _settled(&r.status, &r.failed_bytes)
                return None
            docnos = np.empty(n, object)
            scores = np.empty(n, np.float64)
            lines = np.empty(n, np.int64)
            for i in range(n):
                entry = &r.entries[i]
                docnos[i] = PyUnicode_DecodeUTF8(entry.docno, entry.length, NULL)
                scores[i] = entry.score
                lines[i] = r.lines.data[i]
            taken.append((_strings_text(&r.topics, g)[:_strings_length(&r.topics, g)]
                          .decode("utf-8"), docnos, scores, lines))
            h.groups[g].taken = True
            h.groups[g].head = h.groups[g].tail = NULL
            h.groups[g].n = 0
        with nogil:
            if keep >= 0 and _hold_again(h, keep) != 0:
                r.status = NO_MEMORY
            elif keep < 0:
                _free_slabs(h)
        if r.status != OK:
            _settled(&r.status, &r.failed_bytes)
            return None
        if last:
            self.finished = True
        return taken

    def append_held(self, RunRanker other not None):
        """Hold the lines of ``other`` (the next part of the same run, read by another
        grouping ranker; neither finished) after this ranker's own, as if one ranker had
        read both parts: its records are taken over, not copied, each topic's after this
        ranker's lines of the same topic. ``other`` is left empty. Returns the status."""
        if not (self.state.grouping and other.state.grouping) or self.finished \
                or other.finished or other is self:
            raise ValueError("append_held needs two distinct grouping rankers, not finished")
        if self.state.status != OK or other.state.status != OK:
            raise ValueError("append_held needs two rankers without error")
        cdef RunState* r = &self.state
        cdef RunState* o = &other.state
        cdef Py_ssize_t i
        cdef int64_t topic
        cg_take_failed_bytes()
        with nogil:
            _shift_lines(&o.held, r.lines_seen)
            if _take_slabs(&r.held, &o.held) != 0:
                r.status = NO_MEMORY
            for i in range(_strings_count(&o.topics)):
                if r.status != OK:
                    break
                topic = _strings_add(&r.topics, _strings_text(&o.topics, i),
                                     _strings_length(&o.topics, i))
                if topic < 0:
                    r.status = _stop_code(topic)
                elif _hold_group(&r.held, topic) != 0:
                    r.status = NO_MEMORY
                else:
                    _link_group(&r.held, topic, &o.held.groups[i])
            if r.status == OK and _take_tags(r, o) != 0:
                r.status = NO_MEMORY
        if r.status != OK:
            return _settled(&r.status, &r.failed_bytes)
        r.current = -1
        r.n_lines_read += o.n_lines_read
        r.lines_seen += o.lines_seen
        _held_free(&o.held)
        other.finished = other.handed_over = True
        return r.status

    cdef int _rank_held(self, int threads) except -1:
        """finish()'s work for a grouping ranker: rank every held topic (in parts of
        topics ranked by up to ``threads`` threads, each into its place in the output),
        then free what was held."""
        cdef RunState* r = &self.state
        cdef Held* h = &r.held
        cdef Py_ssize_t g, n_groups = h.n_groups, total = 0, part, n_parts, at, rows
        cdef int64_t records = 0
        cdef RunState* sub
        for g in range(n_groups):
            total += _kept(r.depth, h.groups[g].n)
        if _reserve_outputs(r, total) != 0:
            return 0
        n_parts = min(threads * 4 if threads > 1 else 1,
                      max(1, h.n_records // HELD_RECORDS_PER_PART))
        if n_parts <= 1:
            with nogil:
                for g in range(n_groups):
                    if _rank_group(r, h, &r.topics, g) != 0:
                        break
                _held_free(h)
            return 0
        bounds = [0]                    # topics of about equal records per part
        for g in range(n_groups):
            records += h.groups[g].n
            if records * n_parts >= h.n_records * len(bounds) and len(bounds) < n_parts:
                bounds.append(g + 1)
        if bounds[len(bounds) - 1] != n_groups:     # (no negative indexes: wraparound off)
            bounds.append(n_groups)
        n_parts = len(bounds) - 1
        self.parts = <RunState*>cg_calloc(n_parts, sizeof(RunState))
        if self.parts == NULL:
            r.status = NO_MEMORY
            return 0
        self.part_bounds = bounds
        at = r.out_levels.size
        for part in range(n_parts):
            sub = &self.parts[part]
            sub.qrels, sub.ties, sub.precision, sub.depth = r.qrels, r.ties, r.precision, r.depth
            sub.seed, sub.keep_scores, sub.duplicates = r.seed, r.keep_scores, r.duplicates
            sub.max_line, sub.current, sub.judgments_topic = r.max_line, -1, -1
            sub.out_levels.wide = r.out_levels.wide
            sub.rows_borrowed = True
            rows = 0
            for g in range(bounds[part], bounds[part + 1]):
                rows += _kept(r.depth, h.groups[g].n)
            sub.out_levels.data = <char*>r.out_levels.data + at * _level_bytes(&r.out_levels)
            sub.out_judged.data = r.out_judged.data + at
            if r.keep_scores:
                sub.out_scores.data = r.out_scores.data + at
            sub.out_levels.capacity = sub.out_judged.capacity = rows
            sub.out_scores.capacity = rows if r.keep_scores else 0
            at += rows
        try:
            work = [0, threading.Lock()]
            helpers = [threading.Thread(target=self._rank_parts, args=(work,))
                       for _ in range(1, min(threads, n_parts))]
            for helper in helpers:
                helper.start()
            try:
                self._rank_parts(work)
            finally:
                for helper in helpers:
                    helper.join()
            with nogil:
                _gather_parts(&self.state, self.parts, n_parts)
        finally:
            for part in range(n_parts):
                _free_state(&self.parts[part])
            free(self.parts)
            self.parts = NULL
            self.part_bounds = None
        with nogil:
            _held_free(h)
        return 0

    def _rank_parts(self, list work):
        """A thread's share of _rank_held: the next part not taken, until none is left."""
        cdef Py_ssize_t part = 0, g, first, stop
        cdef RunState* sub
        while True:
            with work[1]:
                part = work[0]
                if part >= len(self.part_bounds) - 1:
                    return
                work[0] = part + 1
            sub = &self.parts[part]
            first, stop = self.part_bounds[part], self.part_bounds[part + 1]
            with nogil:
                cg_take_failed_bytes()
                for g in range(first, stop):
                    if _rank_group(sub, &self.state.held, &self.state.topics, g) != 0:
                        break
                _settled(&sub.status, &sub.failed_bytes)

    @property
    def tags_agree(self):
        """Whether every data line read had the same run tag (True before any line)."""
        return not self.state.tags_differ

    def feed(self, const unsigned char[::1] text):
        """Parse a block of whole lines; returns the status (STATUS_OK or why it stopped)."""
        if self.finished or self.state.status != OK:
            raise ValueError("this ranker is finished or has stopped")
        cdef const char* data = <const char*>&text[0] if text.shape[0] else NULL
        cdef Py_ssize_t size = text.shape[0]
        with nogil:
            cg_take_failed_bytes()
            if size and _run_feed(&self.state, data, size) != 0 and self.state.n_staged:
                _flush_staged(&self.state)      # (a stop: the lines before it still held)
        return _settled(&self.state.status, &self.state.failed_bytes)

    def add_dict(self, run, Py_ssize_t first=0, Py_ssize_t stop=-1):
        """Add ``{qid: {docno: score}}`` with str ids and int or float scores: the
        topics ``first`` to ``stop`` (-1: the last) in the dict's order, so that rankers
        in several threads can share a dict. Anything else (or a NaN score) stops with
        BAD_LINE.

        The topics are taken in batches: each batch's documents are copied out of the
        dict with the GIL held, then ranked with it released (another thread's ranker
        collects its next batch meanwhile). A dict's keys are distinct, so are their
        UTF-8 encodings: no duplicate check."""
        if self.finished or self.state.status != OK:
            raise ValueError("this ranker is finished or has stopped")
        cg_take_failed_bytes()
        self._add_dict(run, first, stop)
        return _settled(&self.state.status, &self.state.failed_bytes)

    cdef int _add_dict(self, object run, Py_ssize_t first, Py_ssize_t stop) except -1:
        """add_dict's work; returns the status."""
        if not PyDict_CheckExact(run):
            self.state.status = BAD_LINE
            return self.state.status
        cdef Py_ssize_t topic_position = 0, doc_position, n, i, n_docs, index = -1
        cdef Py_ssize_t range_position, range_index
        cdef PyObject* qid
        cdef PyObject* docs
        cdef PyObject* docno
        cdef PyObject* score_object
        cdef const char* text
        cdef double score = 0.0
        cdef int64_t topic, judgments_topic = -1
        cdef RunState* r = &self.state
        cdef Py_ssize_t total = 0
        cdef int ranked
        if stop < 0:
            stop = PyDict_Size(run)
        if _rank_current(r) != 0:       # a topic left over from feed()
            return r.status
        r.current = -1
        while index + 1 < first and PyDict_Next(run, &topic_position, &qid, &docs):
            index += 1                  # to the range's first topic
        range_position, range_index = topic_position, index
        while not r.rows_borrowed and index + 1 < stop \
                and PyDict_Next(run, &topic_position, &qid, &docs):
            index += 1                  # room for the range's ranked rows (borrowed
            if PyDict_CheckExact(<object>docs):     # rows were counted by dict_rows)
                total += _kept(r.depth, PyDict_Size(<object>docs))
        if _reserve_outputs(r, total) != 0:
            return r.status
        topic_position, index = range_position, range_index
        while True:
            while index + 1 < stop and r.scores.size < DICT_BATCH_DOCUMENTS \
                    and PyDict_Next(run, &topic_position, &qid, &docs):
                index += 1
                if not PyUnicode_CheckExact(<object>qid) or not PyDict_CheckExact(<object>docs):
                    r.status = BAD_LINE
                    return r.status
                text = _utf8(<object>qid, &n)
                if text == NULL:
                    r.status = BAD_LINE
                    return r.status
                topic = _strings_add_new(&r.topics, text, n)
                if topic == -1:
                    r.status = NOT_GROUPED
                    return r.status
                if topic < 0:
                    r.status = _stop_code(topic)
                    return r.status
                judgments_topic = _strings_find_after(&r.qrels.topics, judgments_topic, text, n)
                doc_position = 0
                n_docs = PyDict_Size(<object>docs)
                i = 0
                while i < n_docs and PyDict_Next(<object>docs, &doc_position, &docno,
                                                 &score_object):
                    if not PyUnicode_CheckExact(<object>docno) \
                            or not _exact_number(<object>score_object, &score) or isnan(score):
                        r.status = BAD_LINE
                        return r.status
                    text = _utf8(<object>docno, &n)
                    if text == NULL:
                        r.status = BAD_LINE
                        return r.status
                    if _push_bytes(&r.docnos, text, n) != 0 \
                            or _push_int64(&r.doc_starts, r.docnos.size) != 0 \
                            or _push_double(&r.scores,
                                            _compared_score(score, r.precision)) != 0:
                        r.status = NO_MEMORY
                        return r.status
                    i += 1
                r.lines_seen += i
                r.n_lines_read += i
                if _push_int64(&r.batch_judgments, judgments_topic) != 0 \
                        or _push_int64(&r.batch_ends, r.scores.size) != 0:
                    r.status = NO_MEMORY
                    return r.status
            if r.batch_ends.size == 0:
                return r.status
            with nogil:
                ranked = _rank_batch(r)
            if ranked != 0:
                return r.status

    def add_columns(self, TextColumn topics not None, TextColumn docnos not None,
                    const double[::1] scores not None, const int64_t[::1] starts not None,
                    order=None, Py_ssize_t first=0, Py_ssize_t stop=-1):
        """Rank the topics ``first`` to ``stop`` (-1: the last) of Arrow columns (see
        TextColumn) grouped by group_rows (``starts``, ``order``), so that rankers in
        several threads can share the columns: each topic's rows in row order (the
        order ties="input_order" keeps), their docnos read in place. A NaN score stops
        with BAD_LINE, a docno twice in a topic with DUPLICATE (``status_line``: the
        row + 1); columns that are not valid are refused (ValueError)."""
        cdef const int64_t[::1] rows
        cdef const int64_t* rows_data = NULL
        cdef Py_ssize_t n_topics = starts.shape[0] - 1, g, total = 0
        cdef RunState* r = &self.state
        if self.finished or r.status != OK:
            raise ValueError("this ranker is finished or has stopped")
        if not (topics.valid and docnos.valid) or topics.column.n_rows != scores.shape[0] \
                or docnos.column.n_rows != scores.shape[0] or n_topics < 0 \
                or starts[0] != 0 or starts[n_topics] != scores.shape[0]:
            raise ValueError("the columns must be valid, grouped, and of one length")
        if order is not None:
            rows = order
            if rows.shape[0] != scores.shape[0]:
                raise ValueError("the order must name every row")
            rows_data = &rows[0] if rows.shape[0] else NULL
        if stop < 0 or stop > n_topics:
            stop = n_topics
        if first < 0 or first > stop:
            raise ValueError("first must be in [0, stop]")
        cg_take_failed_bytes()
        with nogil:
            if _rank_current(r) == 0:       # a topic left over from feed()
                r.current = -1
                for g in range(first, stop):
                    total += _kept(r.depth, starts[g + 1] - starts[g])
                if r.rows_borrowed or _reserve_outputs(r, total) == 0:
                    _rank_columns(r, &topics.column, &docnos.column,
                                  &scores[0] if scores.shape[0] else NULL, &starts[0],
                                  rows_data, first, stop)
        return _settled(&r.status, &r.failed_bytes)

    def column_rows(self, const int64_t[::1] starts not None, list bounds):
        """The ranked rows (cut at the depth) of each range of topics of grouped
        columns (see add_columns), ``bounds[i]`` to ``bounds[i + 1]``."""
        cdef Py_ssize_t part, g, n
        rows = []
        for part in range(len(bounds) - 1):
            n = 0
            for g in range(bounds[part], bounds[part + 1]):
                n += _kept(self.state.depth, starts[g + 1] - starts[g])
            rows.append(n)
        return rows

    def dict_rows(self, run, list bounds):
        """The ranked rows (cut at the depth) of each range of a run dict's topics,
        ``bounds[i]`` to ``bounds[i + 1]`` in the dict's order; None if a topic's
        documents are not a dict (add_dict then stops)."""
        if not PyDict_CheckExact(run):
            return None
        cdef Py_ssize_t position = 0, index = 0, part = 0, n_parts = len(bounds) - 1
        cdef PyObject* qid
        cdef PyObject* docs
        rows = [0] * max(n_parts, 0)
        while part < n_parts and PyDict_Next(run, &position, &qid, &docs):
            if not PyDict_CheckExact(<object>docs):
                return None
            while part < n_parts and index >= bounds[part + 1]:
                part += 1
            if part < n_parts and index >= bounds[part]:
                rows[part] += _kept(self.state.depth, PyDict_Size(<object>docs))
            index += 1
        return rows

    def write_rows_into(self, levels, judged, scores, Py_ssize_t at, Py_ssize_t n):
        """Write the ranked rows into ``levels[at:at + n]`` (of levels_dtype),
        ``judged[at:at + n]`` (uint8, 0 / 1) and, if the ranker keeps scores,
        ``scores[at:at + n]`` (float64): numpy arrays the caller owns, instead of arrays
        of its own. The rankers of consecutive topic ranges of a run dict then fill one
        output, and append() moves no rows. Before anything is ranked; ``n``: the rows
        the range will rank (see dict_rows)."""
        cdef RunState* r = &self.state
        if not isinstance(levels, np.ndarray) or levels.dtype != self.levels_dtype:
            raise ValueError(f"the levels must be a numpy array of {self.levels_dtype}")
        cdef unsigned char[::1] levels_view = levels.view(np.uint8)   # its bytes
        cdef Py_ssize_t item = _level_bytes(&r.out_levels)
        cdef unsigned char[::1] judged_view = judged
        cdef double[::1] scores_view
        if r.keep_scores and scores is None:
            raise ValueError("the rows do not fit the arrays: this ranker keeps scores")
        if r.keep_scores:
            scores_view = scores
        if self.finished or r.status != OK or r.out_levels.capacity or r.rows_borrowed:
            raise ValueError("write_rows_into comes before anything is ranked")
        if at < 0 or n < 0 or (at + n) * item > levels_view.shape[0] \
                or at + n > judged_view.shape[0] \
                or (r.keep_scores and at + n > scores_view.shape[0]):
            raise ValueError("the rows do not fit the arrays")
        self.rows, self.rows_at = (levels, judged, scores if r.keep_scores else None), at
        r.rows_borrowed = True
        if n == 0:
            return
        r.out_levels.data, r.out_levels.capacity = &levels_view[at * item], n
        r.out_judged.data, r.out_judged.capacity = <char*>&judged_view[at], n
        if r.keep_scores:
            r.out_scores.data, r.out_scores.capacity = &scores_view[at], n

    cdef bint _rows_follow(self, RunRanker other):
        """Whether ``other``'s borrowed rows start where this ranker's end, this one's
        all written: then appending them moves nothing."""
        cdef RunState* r = &self.state
        cdef RunState* o = &other.state
        return r.rows_borrowed and o.rows_borrowed \
            and all(mine is theirs for mine, theirs in zip(self.rows, other.rows)) \
            and self.rows_at + r.out_levels.size == other.rows_at \
            and r.out_levels.size == r.out_levels.capacity

    def append(self, RunRanker other not None):
        """Move the ranked topics of ``other`` (the next part of the same run, finished)
        after this ranker's own (finished too), as if one ranker had read both parts;
        ``other`` is left empty. A topic in both parts stops this ranker with
        NOT_GROUPED. Returns the status."""
        if not (self.finished and other.finished) or self.handed_over or other.handed_over \
                or other is self:
            raise ValueError("append needs two distinct finished rankers, results not taken")
        if self.state.status != OK or other.state.status != OK:
            raise ValueError("append needs two rankers that finished without error")
        cdef RunState* r = &self.state
        cdef RunState* o = &other.state
        cdef Py_ssize_t i, n
        cdef int64_t topic
        cdef const char* text
        cdef bint rows_follow = self._rows_follow(other)
        cg_take_failed_bytes()
        if (r.rows_borrowed or o.rows_borrowed) and not rows_follow:
            r.status = BAD_LINE     # rows not all written: the run dict changed meanwhile
            return r.status
        with nogil:
            for i in range(_strings_count(&o.topics)):
                text, n = _strings_text(&o.topics, i), _strings_length(&o.topics, i)
                topic = _strings_add_new(&r.topics, text, n)
                if topic == -1:
                    r.status = NOT_GROUPED
                    break
                if topic < 0:
                    r.status = _stop_code(topic)
                    break
            if r.status == OK and rows_follow:      # the rows are in place already
                _take_following_rows(r, o)
            elif r.status == OK and (
                    _extend(&r.out_levels.data, &r.out_levels.size, &r.out_levels.capacity,
                            o.out_levels.data, o.out_levels.size,
                            _level_bytes(&r.out_levels)) != 0
                    or _extend(<void**>&r.out_judged.data, &r.out_judged.size,
                               &r.out_judged.capacity, o.out_judged.data, o.out_judged.size,
                               1) != 0
                    or (r.keep_scores and _extend(
                        <void**>&r.out_scores.data, &r.out_scores.size,
                        &r.out_scores.capacity, o.out_scores.data, o.out_scores.size, 8) != 0)):
                r.status = NO_MEMORY
            if r.status == OK and (
                    _extend(<void**>&r.counts.data, &r.counts.size, &r.counts.capacity,
                            o.counts.data, o.counts.size, 8) != 0
                    or _extend(<void**>&r.judgment_topics.data, &r.judgment_topics.size,
                               &r.judgment_topics.capacity, o.judgment_topics.data,
                               o.judgment_topics.size, 8) != 0):
                r.status = NO_MEMORY
        if r.status == OK and (_take_tags(r, o) != 0
                               or _take_duplicates(r, o, r.lines_seen,
                                                   _strings_count(&r.topics)
                                                   - _strings_count(&o.topics)) != 0):
            r.status = NO_MEMORY
        if r.status != OK:
            return _settled(&r.status, &r.failed_bytes)
        r.n_lines_read += o.n_lines_read
        r.lines_seen += o.lines_seen
        _release_int64s(&o.counts)
        _release_int64s(&o.judgment_topics)
        if not o.rows_borrowed:
            _release(<void**>&o.out_levels.data, &o.out_levels.size, &o.out_levels.capacity)
            _release(<void**>&o.out_judged.data, &o.out_judged.size, &o.out_judged.capacity)
            _release(<void**>&o.out_scores.data, &o.out_scores.size, &o.out_scores.capacity)
        other.handed_over = True
        return r.status

    def finish(self, int threads=1):
        """Rank the last topic, or for a grouping ranker every topic held (by up to
        ``threads`` threads); returns the status."""
        if self.state.status == OK and not self.finished:
            cg_take_failed_bytes()
            if self.state.grouping:
                self._rank_held(threads)
            else:
                with nogil:
                    _rank_current(&self.state)
            _settled(&self.state.status, &self.state.failed_bytes)
        self.finished = True
        return self.state.status

    @property
    def status(self):
        """STATUS_OK, or why it stopped."""
        return self.state.status

    @property
    def failed_bytes(self):
        """With STATUS_NO_MEMORY: the bytes that the allocation that failed asked for
        (0 if not known)."""
        return self.state.failed_bytes

    @property
    def status_line(self):
        return self.state.status_line

    @property
    def n_lines(self):
        """Data lines read."""
        return self.state.n_lines_read

    def check_unused_judgments(self):
        """Once finished (with every part appended), against a table finished without
        its duplicate check: check the qrels topics that no run topic used (the rest
        were checked as they were joined), then count the table as checked. Returns
        the status: STATUS_QRELS_DUPLICATE if one has a docno twice. Nothing to do
        for a checked table."""
        if not self.finished or self.handed_over:
            raise ValueError("check_unused_judgments comes once the ranker is finished")
        cdef RunState* r = &self.state
        cdef QrelsState* q = r.qrels
        cdef Py_ssize_t i, n_topics = _strings_count(&q.topics)
        cdef uint8_t* used
        cdef int64_t found
        if r.status != OK or not q.unchecked:
            return r.status
        cg_take_failed_bytes()
        used = <uint8_t*>cg_calloc(n_topics + 1, 1)
        if used == NULL:
            r.status = NO_MEMORY
            return _settled(&r.status, &r.failed_bytes)
        with nogil:
            for i in range(r.judgment_topics.size):
                if r.judgment_topics.data[i] >= 0:
                    used[r.judgment_topics.data[i]] = 1
            found = _check_topics(q, 0, n_topics, used)
            free(used)
        if found < -1:
            r.status = _stop_code(found)
            _settled(&r.status, &r.failed_bytes)
        elif found >= 0:
            r.status = QRELS_DUPLICATE
        else:
            q.unchecked = False     # what names a row's line is no longer needed
            free(q.by_topic)
            q.by_topic = NULL
            _release_int64s(&q.comment_rows)
        return r.status

    def same_topics(self):
        """Once finished (with every part appended): whether the run ranked exactly the
        qrels table's topics, in the table's order (run topic i is qrels topic i), so
        that one list of topic ids names both."""
        if not self.finished:
            raise ValueError("same_topics comes once the ranker is finished")
        cdef RunState* r = &self.state
        cdef Py_ssize_t i, n = r.judgment_topics.size
        if r.status != OK or n != _strings_count(&r.qrels.topics) \
                or n != _strings_count(&r.topics):
            return False
        for i in range(n):
            if r.judgment_topics.data[i] != i:
                return False
        return True

    @property
    def levels_dtype(self):
        """The levels' dtype: the table's, int8 or float64 (see QrelsTable.grouped)."""
        return _level_dtype(&self.state.out_levels)

    @property
    def keeps_scores(self):
        """Whether the ranked rows keep their scores (for ties="average")."""
        return self.state.keep_scores

    def result(self):
        """(topics in order of appearance, offsets, levels, judged, scores or None, tag).

        Hands the ranked columns over: the arrays use the C buffers in place (no
        copy); a second call is an error.
        """
        if not self.finished or self.state.status != OK or self.handed_over:
            raise ValueError("no result: the ranker is not finished, has stopped, or gave it")
        self.handed_over = True
        counts = _int64_array(&self.state.counts)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        cdef RunState* r = &self.state
        if r.rows_borrowed:         # the caller's arrays, as far as written
            stop = self.rows_at + r.out_levels.size
            levels = self.rows[0][self.rows_at:stop]
            judged = self.rows[1][self.rows_at:stop].view(np.bool_)
            scores = self.rows[2][self.rows_at:stop] if r.keep_scores else None
        else:
            levels = _hand_over(&r.out_levels.data, &r.out_levels.size,
                                &r.out_levels.capacity, _level_dtype(&r.out_levels))
            judged = _hand_over(<void**>&r.out_judged.data, &r.out_judged.size,
                                &r.out_judged.capacity, np.bool_)
            scores = _hand_over(<void**>&r.out_scores.data, &r.out_scores.size,
                                &r.out_scores.capacity, np.float64) if r.keep_scores else None
        tag = r.tag.data[:r.tag.size].decode("utf-8") if r.tag.size else ""
        return _strings_list(&r.topics), offsets, levels, judged, scores, tag


def prefix_keys(list ids):
    """Each id's first 8 UTF-8 bytes read as a big-endian number (short ids padded with
    zero bytes): ids whose keys differ are in the same order as their bytes; ids that
    share one (the same first 8 bytes, or the same but for trailing NUL bytes) need
    comparing whole."""
    cdef Py_ssize_t i, n, count = len(ids)
    cdef const char* text
    result = np.empty(count, dtype=np.uint64)
    cdef uint64_t[::1] out = result
    for i in range(count):
        item = ids[i]
        if not PyUnicode_CheckExact(item):
            raise TypeError(f"ids must be str, got {type(item).__name__}")
        text = _utf8(item, &n)
        if text == NULL:
            raise ValueError(f"id {item!r} has no UTF-8 bytes (a lone surrogate)")
        out[i] = _docno_prefix(text, n)     # (the docno tie rules' key: any bytes)
    return result


def random_tie_keys(uint64_t seed, const int64_t[::1] positions):
    """The random tie rule's keys for documents at these positions within their topics."""
    result = np.empty(positions.shape[0], dtype=np.int64)
    cdef int64_t[::1] out = result
    cdef Py_ssize_t i
    with nogil:
        for i in range(positions.shape[0]):
            out[i] = random_tie_key(seed, positions[i])
    return result
