"""The qrels table: judgments parsed in C (from a file's lines, a dict or Arrow columns)
into flat arrays grouped by topic, checked for duplicate docnos, and, if asked, an index
per topic that any number of rankers read at once (see _qrels.pxd for the layout and the
lookups, and _trec.pyx for the ranker that joins run topics with it).
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t, uint32_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset
from libc.math cimport isnan, isinf

from cpython.dict cimport PyDict_Next
from cpython.pyport cimport PY_SSIZE_T_MAX
from cpython.ref cimport PyObject

from cgcore._buffers cimport (
    Levels, _array, _extend_int64s, _extend_levels, _level_at, _level_bytes, _level_dtype,
    _owning_buffer, _push_bytes, _push_int64, _push_level, _push_small_level, _push_uint32,
    _release, _release_int64s, _reserve, _set_level, cg_calloc, cg_malloc, cg_realloc,
    cg_set_allocation_limit, cg_take_failed_bytes)
from cgcore._columns cimport Column, TextColumn, _cell
from cgcore._status cimport (APPENDED, BAD_LINE, DUPLICATE, KEEP_ERROR, KEEP_LAST, NO_MEMORY,
                             OK, RELEASED, TOO_BIG, _settled, _stop_code)
from cgcore._strings cimport (_hash, _tag, _strings_add, _strings_count, _strings_equal, _strings_free,
                              _strings_init, _strings_length, _strings_list, _strings_text)
from cgcore._text cimport (
    MAX_FIELDS, PyUnicode_CheckExact, _exact_number, _next_line, _parse_number, _skipped_line,
    _utf8, _valid_utf8, cg_text_kind)

import threading

import numpy as np

cdef extern from "Python.h":
    bint PyDict_CheckExact(object o)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

# QrelsTable.finish(threads): at least this many judgments per thread checking duplicates
CHECK_ROWS_PER_THREAD = 1 << 18

cdef Py_ssize_t MAX_SEGMENT_BYTES = 0xFFFFFFFF   # docno bytes a segment holds (its docno
                                                # starts are uint32)
cdef Py_ssize_t _segment_bytes = MAX_SEGMENT_BYTES   # the limit applied (see the test hook)
SEGMENT_BYTES = MAX_SEGMENT_BYTES               # (for the tests)


def _set_segment_bytes(Py_ssize_t n):
    """Set how many docno bytes a qrels segment may hold, at most MAX_SEGMENT_BYTES (a
    test hook: past it a table stops and the reference reader reads the file); returns
    the previous limit."""
    global _segment_bytes
    if not 0 <= n <= MAX_SEGMENT_BYTES:
        raise ValueError(f"a segment holds 0 to {MAX_SEGMENT_BYTES} docno bytes")
    previous, _segment_bytes = _segment_bytes, n
    return previous


def _set_allocation_limit(size_t n):
    """This module's allocation limit (see cgcore._trec._set_allocation_limit)."""
    return cg_set_allocation_limit(n)


cdef int _qrels_feed(QrelsState* q, const char* text, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t position = 0, length = 0, n_fields
    cdef int kind = cg_text_kind(text, size)
    cdef bint ascii = kind >= 1         # then no line needs the UTF-8 check
    cdef bint plain = kind == 2         # ... nor a comment line any check
    cdef Py_ssize_t starts[MAX_FIELDS]
    cdef Py_ssize_t ends[MAX_FIELDS]
    cdef int64_t topic, previous_topic = -1
    cdef const char* row
    cdef double value = 0.0     # (set by the parse; gcc cannot tell)
    cdef uint8_t digit
    cdef bint one_digit
    cdef int parsed = 1, failure
    cdef Py_ssize_t skipped
    while position < size:
        q.lines_seen += 1
        q.stop_offset = position        # (where the line starts, if it is bad)
        skipped = _skipped_line(text, position, size, plain, False, q.max_line)
        if skipped >= 0:                # a comment line: nothing to check
            if _push_int64(&q.comment_rows, q.relevance.size) != 0:
                q.status, q.status_line = NO_MEMORY, q.lines_seen
                return -1
            position = skipped
            continue
        row = text + position
        n_fields = _next_line(text, position, size, starts, ends, &length)
        if length > q.max_line or (not ascii and not _valid_utf8(<const uint8_t*>row, length)):
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        position += length + 1
        if n_fields <= 0:       # blank lines are errors in qrels; so is a CR inside a line
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        if row[starts[0]] == b'#':
            if _push_int64(&q.comment_rows, q.relevance.size) != 0:
                q.status, q.status_line = NO_MEMORY, q.lines_seen
                return -1
            continue
        if n_fields != 4:
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        digit = <uint8_t>row[starts[3]] - 48    # 48 = ord('0'); other bytes wrap above 9
        one_digit = ends[3] - starts[3] == 1 and digit <= 9     # the usual level
        if not one_digit:
            parsed = _parse_number(row + starts[3], ends[3] - starts[3], &value)
        if parsed < 0:
            q.status, q.status_line = NO_MEMORY, q.lines_seen
            return -1
        if parsed == 0 or (not one_digit and (isnan(value) or isinf(value))):
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        if previous_topic >= 0 and _strings_equal(&q.topics, previous_topic, row + starts[0],
                                                  ends[0] - starts[0]):
            topic = previous_topic       # judgments usually come a topic at a time
        else:
            topic = _strings_add(&q.topics, row + starts[0], ends[0] - starts[0])
            previous_topic = topic
        failure = _stop_code(topic) if topic < 0 \
            else _push_docno(q, row + starts[2], ends[2] - starts[2])
        if failure == OK and (_note_topic(q, topic) != 0
                              or (_push_small_level(&q.relevance, digit) if one_digit
                                  else _push_level(&q.relevance, value)) != 0):
            failure = NO_MEMORY
        if failure != OK:
            q.status, q.status_line = failure, q.lines_seen
            return -1
    return 0


cdef int _qrels_add_columns(QrelsState* q, const Column* topics, const Column* docnos,
                            const double* levels, Py_ssize_t n) noexcept nogil:
    """QrelsTable.add_columns' work: as _qrels_feed, a row for a line."""
    cdef Py_ssize_t row, length, docno_length
    cdef int64_t topic, previous_topic = -1
    cdef const char* text
    cdef const char* docno
    cdef int failure
    for row in range(n):
        q.lines_seen += 1
        if isnan(levels[row]) or isinf(levels[row]):
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        text = _cell(topics, row, &length)
        if previous_topic >= 0 and _strings_equal(&q.topics, previous_topic, text, length):
            topic = previous_topic
        else:
            topic = _strings_add(&q.topics, text, length)
            previous_topic = topic
        docno = _cell(docnos, row, &docno_length)
        failure = _stop_code(topic) if topic < 0 else _push_docno(q, docno, docno_length)
        if failure == OK and (_note_topic(q, topic) != 0
                              or _push_level(&q.relevance, levels[row]) != 0):
            failure = NO_MEMORY
        if failure != OK:
            q.status, q.status_line = failure, q.lines_seen
            return -1
    return 0


cdef inline int _push_docno(QrelsState* q, const char* docno, Py_ssize_t n) noexcept nogil:
    """Add the next row's docno to the last segment: OK, NO_MEMORY, or TOO_BIG past
    MAX_SEGMENT_BYTES of docnos (the reference reader then reads the file)."""
    cdef Segment* last = &q.segments[q.n_segments - 1]
    if last.docnos.size + n > _segment_bytes:
        return TOO_BIG
    if _push_bytes(&last.docnos, docno, n) != 0 \
            or _push_uint32(&last.doc_starts, <uint32_t>last.docnos.size) != 0:
        return NO_MEMORY
    return OK


cdef inline int _note_topic(QrelsState* q, int64_t topic) noexcept nogil:
    """Before adding a row of ``topic``: start a new stretch (rows of one topic in a
    row) unless the last row is of the same topic; -1 when out of memory. Judgments
    usually come a topic at a time, so a table holds a stretch per topic, not a topic
    per row."""
    if q.stretch_topics.size > 0 and q.stretch_topics.data[q.stretch_topics.size - 1] == topic:
        return 0
    if _push_int64(&q.stretch_topics, topic) != 0 \
            or _push_int64(&q.stretch_starts, q.relevance.size) != 0:
        return -1
    return 0


cdef inline int64_t _stretch_stop(QrelsState* q, Py_ssize_t stretch) noexcept nogil:
    if stretch + 1 < q.stretch_starts.size:
        return q.stretch_starts.data[stretch + 1]
    return q.relevance.size


cdef void _walk_stretches(QrelsState* q, int64_t* by_topic, bint* grouped) noexcept nogil:
    """With ``q.topic_starts`` at each topic's first grouped position: walk the stretches
    in reading order, each topic's position moving to its end (filling ``by_topic``,
    grouped position -> row as read, unless NULL; ``grouped`` stays true only if every
    stretch is already where it belongs), then put the starts back."""
    cdef Py_ssize_t n_topics = _strings_count(&q.topics), stretch, t
    cdef int64_t row, start
    for stretch in range(q.stretch_topics.size):
        t = q.stretch_topics.data[stretch]
        start = q.stretch_starts.data[stretch]
        grouped[0] = grouped[0] and q.topic_starts[t] == start
        if by_topic != NULL:
            for row in range(start, _stretch_stop(q, stretch)):
                by_topic[q.topic_starts[t] + row - start] = row
        q.topic_starts[t] += _stretch_stop(q, stretch) - start
    for t in range(n_topics, 0, -1):    # each start now holds its topic's end: shift back
        q.topic_starts[t] = q.topic_starts[t - 1]
    q.topic_starts[0] = 0


cdef int _qrels_group(QrelsState* q) noexcept nogil:
    """Group the rows by topic: a counting sort of the stretches (stable), then, unless
    the rows came grouped already, the rows moved into that order, with
    ``q.by_topic`` keeping where each grouped row was read (for naming a duplicate's
    line)."""
    cdef Py_ssize_t n_topics = _strings_count(&q.topics), n_rows = q.relevance.size
    cdef Py_ssize_t t, stretch
    cdef bint grouped_already = True
    q.topic_starts = <int64_t*>cg_malloc((n_topics + 1) * 8)
    if q.topic_starts == NULL:
        q.status = NO_MEMORY
        return -1
    for t in range(n_topics + 1):
        q.topic_starts[t] = 0
    for stretch in range(q.stretch_topics.size):
        q.topic_starts[q.stretch_topics.data[stretch] + 1] += \
            _stretch_stop(q, stretch) - q.stretch_starts.data[stretch]
    for t in range(n_topics):
        q.topic_starts[t + 1] += q.topic_starts[t]
    _walk_stretches(q, NULL, &grouped_already)
    if not grouped_already:
        q.by_topic = <int64_t*>cg_malloc((n_rows + 1) * 8)
        if q.by_topic == NULL:
            q.status = NO_MEMORY
            return -1
        _walk_stretches(q, q.by_topic, &grouped_already)
    _release_int64s(&q.stretch_topics)
    _release_int64s(&q.stretch_starts)
    if q.keep_lines and _note_row_lines(q) != 0:
        q.status = NO_MEMORY
        return -1
    # Move the rows before any check: a Lookup finds its rows at first_row + position,
    # which holds only once the rows are grouped (checking before the move compared a
    # topic's docnos with other topics' rows and missed duplicates in interleaved topics),
    # and in one segment (parts read from topic starts keep every topic in one).
    if q.by_topic != NULL or not _topics_within_segments(q):
        q.status = _move_rows(q, q.by_topic, n_rows)
        if q.status != OK:
            return -1
    return 0


cdef int _note_row_lines(QrelsState* q) noexcept nogil:
    """Keep the line each row was read from, in grouped order (QrelsState.row_lines):
    its rows and comment lines before it, plus one (qrels have no blank lines); -1 when
    out of memory."""
    cdef Py_ssize_t n = q.relevance.size, k = 0, i
    cdef int64_t* by_read = <int64_t*>cg_malloc((n + 1) * 8)
    if by_read == NULL:
        return -1
    for i in range(n):
        while k < q.comment_rows.size and q.comment_rows.data[k] <= i:
            k += 1
        by_read[i] = i + k + 1
    if q.by_topic == NULL:
        q.row_lines = by_read
        return 0
    q.row_lines = <int64_t*>cg_malloc((n + 1) * 8)
    if q.row_lines != NULL:
        for i in range(n):
            q.row_lines[i] = by_read[q.by_topic[i]]
    free(by_read)
    return 0 if q.row_lines != NULL else -1


cdef bint _topics_within_segments(QrelsState* q) noexcept nogil:
    """Whether each (grouped) topic's rows are all in one segment."""
    cdef Py_ssize_t t
    if q.n_segments == 1:
        return True
    for t in range(_strings_count(&q.topics)):
        if q.topic_starts[t + 1] > q.topic_starts[t] and \
                _segment_of(q, q.topic_starts[t]) != _segment_of(q, q.topic_starts[t + 1] - 1):
            return False
    return True


cdef int64_t _line_of_row(QrelsState* q, int64_t row) noexcept nogil:
    """The line that row ``row`` (in reading order) was read from: the rows and the
    comment lines before it, plus one (qrels have no blank lines)."""
    cdef Py_ssize_t comments = 0
    while comments < q.comment_rows.size and q.comment_rows.data[comments] <= row:
        comments += 1
    return row + comments + 1


cdef void _qrels_checked(QrelsState* q, int64_t found, bint indexed, bint keep_lines) noexcept nogil:
    """Finish a grouped table after the duplicate check (``found`` as _check_topics,
    the duplicates already counted and named if found, see _find_duplicates): stop
    with DUPLICATE (at the line of the first repeat), NO_MEMORY or TOO_BIG, or keep
    every topic's index if ``indexed``. ``keep_lines``: the table is not checked yet
    (see QrelsState.unchecked), so what names a row's line is kept."""
    if found < -1:
        q.status = _stop_code(found)
    elif found >= 0:
        q.status, q.status_line = DUPLICATE, q.duplicate_line
    if not keep_lines or q.status != OK:
        _forget_lines(q)
    if q.status == OK and indexed and _keep_index(q) != 0:
        q.status = NO_MEMORY


cdef void _forget_lines(QrelsState* q) noexcept nogil:
    """Free what names the line a row was read from (once the table is checked)."""
    free(q.by_topic)
    q.by_topic = NULL
    _release_int64s(&q.comment_rows)


cdef int64_t _find_duplicates(QrelsState* q, int policy, uint8_t* drop) noexcept nogil:
    """Check every (grouped) topic for repeated docnos, counting them all and naming the
    first by the line it was read from (QrelsState.duplicate_*), with ``drop`` (not
    NULL) marking the grouped rows the policy drops: each repeat (KEEP_FIRST), or all
    but a docno's last occurrence (KEEP_LAST). Returns how many rows repeat a docno
    (-2 when out of memory, -3 for a topic past what a Lookup holds). Linear, for the
    tables that have a repeat (the usual check stops at the first)."""
    cdef Py_ssize_t t, n_topics = _strings_count(&q.topics), capacity = 0, slot, i, n
    cdef int64_t position, count, row, existing, read_row, best_read = -1
    cdef int64_t best_row = -1, best_first = -1, best_topic = -1
    cdef uint64_t* scratch = NULL
    cdef uint64_t hash
    cdef const char* docno
    cdef Lookup table
    q.n_duplicates = 0
    for t in range(n_topics):
        count = _judgment_count(q, t)
        if count >= 0xFFFFFFFFLL:
            free(scratch)
            return -3
        n = _index_size(count)
        if _scratch_room(&scratch, &capacity, n) != 0:
            free(scratch)
            return -2
        for i in range(n):
            scratch[i] = 0
        table.slots, table.n_slots = scratch, n
        _point_at(q, t, &table)
        for position in range(count):
            row = table.first_row + position
            docno, i = _docno(table.segment, row), _docno_length(table.segment, row)
            hash = _hash(docno, i, 0)
            existing = _lookup_probe(&table, docno, i, hash, &slot)
            if existing < 0:
                table.slots[slot] = _tag(hash) | <uint64_t>(position + 1)
                continue
            q.n_duplicates += 1
            read_row = q.by_topic[row] if q.by_topic != NULL else row
            if best_read < 0 or read_row < best_read:
                best_read, best_row, best_first, best_topic = read_row, row, existing, t
            if drop != NULL and policy == KEEP_LAST:
                drop[existing] = 1      # the later one takes the slot
                table.slots[slot] = _tag(hash) | <uint64_t>(position + 1)
            elif drop != NULL:
                drop[row] = 1
    free(scratch)
    if q.n_duplicates:
        table.first_row = best_row
        table.segment = _segment_of(q, best_row)
        q.duplicate_docno.size = 0
        if _push_bytes(&q.duplicate_docno, _docno(table.segment, best_row),
                       _docno_length(table.segment, best_row)) != 0:
            return -2
        q.duplicate_line = _line_of_row(q, best_read)
        q.duplicate_first_line = _line_of_row(
            q, q.by_topic[best_first] if q.by_topic != NULL else best_first)
        q.duplicate_topic = best_topic
    return q.n_duplicates


cdef int _drop_rows(QrelsState* q, const uint8_t* drop) noexcept nogil:
    """Remove the (grouped) rows marked in ``drop``, the others staying grouped by topic
    in their order: OK, NO_MEMORY or TOO_BIG (see _move_rows)."""
    cdef Py_ssize_t n_topics = _strings_count(&q.topics), t
    cdef int64_t row, kept = 0, end, start = 0
    cdef int64_t* order = <int64_t*>cg_malloc((q.relevance.size + 1) * 8)
    cdef int status
    if order == NULL:
        return NO_MEMORY
    for t in range(n_topics):
        end = q.topic_starts[t + 1]
        q.topic_starts[t] = kept
        for row in range(start, end):
            if not drop[row]:
                if q.row_lines != NULL:
                    q.row_lines[kept] = q.row_lines[row]
                order[kept] = row
                kept += 1
        start = end
    q.topic_starts[n_topics] = kept
    status = _move_rows(q, order, kept)
    free(order)
    _forget_lines(q)            # (the rows moved: by_topic no longer names them)
    return status


cdef int _keep_index(QrelsState* q) noexcept nogil:
    """Index every (grouped) topic once, for all the rankings to come."""
    cdef Py_ssize_t n_topics = _strings_count(&q.topics), t
    cdef Lookup table
    q.slot_starts = <int64_t*>cg_malloc((n_topics + 1) * 8)
    if q.slot_starts == NULL:
        return -1
    q.slot_starts[0] = 0
    for t in range(n_topics):
        q.slot_starts[t + 1] = q.slot_starts[t] + _index_size(_judgment_count(q, t))
    q.slots = <uint64_t*>cg_calloc(q.slot_starts[n_topics] + 1, 8)
    if q.slots == NULL:
        return -1
    for t in range(n_topics):
        table.slots = q.slots + q.slot_starts[t]
        table.n_slots = q.slot_starts[t + 1] - q.slot_starts[t]
        _point_at(q, t, &table)
        _index_topic(q, t, &table)          # no duplicates: checked already
    return 0


cdef int _move_rows(QrelsState* q, const int64_t* order, Py_ssize_t n_rows) noexcept nogil:
    """Make the table's rows the ``n_rows`` rows of ``order`` (NULL: all, as they are)
    (relevance and docnos), the docnos into one segment: the levels first, then the
    rest (so the peak is one copy of the rows, not two): OK, NO_MEMORY, or TOO_BIG past
    what a segment holds."""
    cdef Py_ssize_t i, n, capacity = 0, k, n_bytes = 0
    cdef int64_t row
    cdef Levels moved = q.relevance
    cdef Segment joined
    cdef Segment* segment
    if order != NULL:
        moved.data = NULL
        if _reserve(&moved.data, &capacity, n_rows, _level_bytes(&moved)) != 0:
            return NO_MEMORY
        for i in range(n_rows):
            _set_level(&moved, i, _level_at(&q.relevance, order[i]))
        free(q.relevance.data)
        q.relevance.data, q.relevance.capacity = moved.data, capacity
    memset(&joined, 0, sizeof(Segment))
    for i in range(n_rows):
        row = order[i] if order != NULL else i
        n_bytes += _docno_length(_segment_of(q, row), row)
    if n_bytes > _segment_bytes:
        return TOO_BIG
    if _reserve(<void**>&joined.docnos.data, &joined.docnos.capacity, n_bytes, 1) != 0 \
            or _reserve(<void**>&joined.doc_starts.data, &joined.doc_starts.capacity, n_rows + 1,
                        4) != 0:
        _segment_free(&joined)
        return NO_MEMORY
    joined.doc_starts.data[0] = 0
    for i in range(n_rows):
        row = order[i] if order != NULL else i
        segment = _segment_of(q, row)
        n = _docno_length(segment, row)
        if n > 0:
            memcpy(joined.docnos.data + joined.docnos.size, _docno(segment, row), n)
        joined.docnos.size += n
        joined.doc_starts.data[i + 1] = <uint32_t>joined.docnos.size
    joined.doc_starts.size = n_rows + 1
    for k in range(q.n_segments):
        _segment_free(&q.segments[k])
    q.segments[0], q.n_segments = joined, 1
    q.relevance.size = n_rows
    return OK


cdef void _segment_free(Segment* segment) noexcept nogil:
    free(segment.docnos.data)
    free(segment.doc_starts.data)
    memset(segment, 0, sizeof(Segment))


cdef void _qrels_free(QrelsState* q, bint handed_over) noexcept nogil:
    """Free what a table holds, but its levels and topic starts once ``handed_over``
    to grouped()'s arrays; the state is left empty."""
    cdef Py_ssize_t k
    _strings_free(&q.topics)
    for k in range(q.n_segments):
        _segment_free(&q.segments[k])
    free(q.segments)
    free(q.stretch_topics.data)
    free(q.stretch_starts.data)
    free(q.comment_rows.data)
    free(q.by_topic)
    free(q.duplicate_docno.data)
    free(q.row_lines)
    if not handed_over:
        free(q.relevance.data)
        free(q.topic_starts)
    free(q.slot_starts)
    free(q.slots)
    memset(q, 0, sizeof(QrelsState))


cdef class QrelsTable:
    """Judgments parsed in C. Feed whole-line blocks, then call :meth:`finish`.

    ``indexed``: keep every topic's docno index once finished (8 bytes per slot, 2 to
    4 slots per judgment), for a table that many runs are ranked against; otherwise
    each ranker indexes the topics it meets, one at a time."""

    def __cinit__(self, bint indexed=False, Py_ssize_t max_line_bytes=-1, bint lines=False):
        self.indexed = indexed
        self.state.keep_lines = lines
        self.state.max_line = max_line_bytes if max_line_bytes >= 0 else PY_SSIZE_T_MAX
        self.state.segments = <Segment*>cg_calloc(1, sizeof(Segment))
        if self.state.segments == NULL:
            raise MemoryError()
        self.state.n_segments = 1
        if _strings_init(&self.state.topics) != 0 or \
                _push_uint32(&self.state.segments[0].doc_starts, 0) != 0:
            raise MemoryError()

    def __dealloc__(self):
        _qrels_free(&self.state, self.handed_over)

    def release(self):
        """Give the table's memory back now, with the GIL released, leaving it stopped
        (STATUS_RELEASED); the arrays grouped() handed out stay. For a table that no
        ranking will use again, freed by a helper thread while the caller goes on (at
        L, 180 MB: 20-27 ms). Only once its rankers are done with it."""
        if self.state.status == RELEASED:
            return
        with nogil:
            _qrels_free(&self.state, self.handed_over)
            self.state.status = RELEASED

    def feed(self, const unsigned char[::1] text):
        """Parse a block of whole lines; returns the status (STATUS_OK or why it stopped)."""
        if self.finished or self.state.status != OK:
            raise ValueError("this table is finished or has stopped")
        cdef const char* data = <const char*>&text[0] if text.shape[0] else NULL
        cdef Py_ssize_t size = text.shape[0]
        with nogil:
            cg_take_failed_bytes()
            if size:
                _qrels_feed(&self.state, data, size)
        return _settled(&self.state.status, &self.state.failed_bytes)

    def add_dict(self, qrels):
        """Add ``{qid: {docno: level}}`` with str ids and int or float levels; anything
        else (other key or value types, NaN or infinite levels) stops with BAD_LINE."""
        if self.finished or self.state.status != OK:
            raise ValueError("this table is finished or has stopped")
        if not PyDict_CheckExact(qrels):
            self.state.status = BAD_LINE
            return self.state.status
        cdef Py_ssize_t topic_position = 0, doc_position, n
        cdef PyObject* qid
        cdef PyObject* docs
        cdef PyObject* docno
        cdef PyObject* level
        cdef const char* text
        cdef double value = 0.0     # (set by _exact_number; gcc cannot tell)
        cdef int64_t topic
        cdef QrelsState* q = &self.state
        cg_take_failed_bytes()
        while PyDict_Next(qrels, &topic_position, &qid, &docs):
            if not PyUnicode_CheckExact(<object>qid) or not PyDict_CheckExact(<object>docs):
                q.status = BAD_LINE
                return q.status
            text = _utf8(<object>qid, &n)
            if text == NULL:
                q.status = BAD_LINE
                return q.status
            topic = _strings_add(&q.topics, text, n)
            if topic < 0:
                q.status = _stop_code(topic)
                return _settled(&q.status, &q.failed_bytes)
            doc_position = 0
            while PyDict_Next(<object>docs, &doc_position, &docno, &level):
                if not PyUnicode_CheckExact(<object>docno):
                    q.status = BAD_LINE
                    return q.status
                if not _exact_number(<object>level, &value) or isnan(value) or isinf(value):
                    q.status = BAD_LINE
                    return q.status
                text = _utf8(<object>docno, &n)
                if text == NULL:
                    q.status = BAD_LINE
                    return q.status
                q.lines_seen += 1
                q.status = _push_docno(q, text, n)
                if q.status == OK and (_note_topic(q, topic) != 0
                                       or _push_level(&q.relevance, value) != 0):
                    q.status = NO_MEMORY
                if q.status != OK:
                    return _settled(&q.status, &q.failed_bytes)
        return q.status

    def append(self, QrelsTable other not None):
        """Add the rows of ``other`` (the next part of the same judgments; neither table
        finished) after this table's own, as if one table had read both parts:
        their levels are copied, their docnos taken over as they are (a segment each:
        the next rows fed go to the last). ``other`` is left finished with status
        STATUS_APPENDED, no longer usable. Returns the status."""
        if self.finished or other.finished or other is self:
            raise ValueError("append needs two distinct tables, neither finished")
        if self.state.status != OK or other.state.status != OK:
            raise ValueError("append needs two tables without error")
        cdef QrelsState* q = &self.state
        cdef QrelsState* o = &other.state
        cdef Py_ssize_t i, n_topics = _strings_count(&o.topics), k
        cdef Py_ssize_t base_rows = q.relevance.size
        cg_take_failed_bytes()
        cdef int64_t* topic_map = <int64_t*>cg_malloc((n_topics + 1) * 8)
        cdef Segment* segments = <Segment*>cg_realloc(
            q.segments, (q.n_segments + o.n_segments) * sizeof(Segment))
        if segments != NULL:
            q.segments = segments
        if topic_map == NULL or segments == NULL:
            free(topic_map)
            q.status = NO_MEMORY
            return _settled(&q.status, &q.failed_bytes)
        with nogil:
            for i in range(n_topics):
                topic_map[i] = _strings_add(&q.topics, _strings_text(&o.topics, i),
                                            _strings_length(&o.topics, i))
                if topic_map[i] < 0:
                    q.status = _stop_code(topic_map[i])
                    break
            for k in range(o.n_segments):       # taken over: other no longer frees them
                q.segments[q.n_segments] = o.segments[k]
                q.segments[q.n_segments].first_row += base_rows
                q.n_segments += 1
                memset(&o.segments[k], 0, sizeof(Segment))
            if q.status == OK and _extend_levels(&q.relevance, &o.relevance) != 0:
                q.status = NO_MEMORY
            _release(&o.relevance.data, &o.relevance.size, &o.relevance.capacity)
            if q.status == OK and (
                    _extend_int64s(&q.stretch_topics, &o.stretch_topics, 0, 0, topic_map) != 0
                    or _extend_int64s(&q.stretch_starts, &o.stretch_starts, 0, base_rows,
                                      NULL) != 0
                    or _extend_int64s(&q.comment_rows, &o.comment_rows, 0, base_rows,
                                      NULL) != 0):
                q.status = NO_MEMORY
            q.lines_seen += o.lines_seen
        free(topic_map)
        other.finished = True
        o.status = APPENDED
        return _settled(&q.status, &q.failed_bytes)

    def add_columns(self, TextColumn topics not None, TextColumn docnos not None,
                    const double[::1] levels not None):
        """Add the rows of Arrow columns (see TextColumn): each row's topic, docno and
        level. A NaN or infinite level stops with BAD_LINE (``status_line``: the row
        + 1); columns that are not valid are refused (ValueError)."""
        if self.finished or self.state.status != OK:
            raise ValueError("this table is finished or has stopped")
        if not (topics.valid and docnos.valid) or topics.column.n_rows != levels.shape[0] \
                or docnos.column.n_rows != levels.shape[0]:
            raise ValueError("the columns must be valid and of one length")
        cdef Py_ssize_t n = levels.shape[0]
        with nogil:
            cg_take_failed_bytes()
            if n:
                _qrels_add_columns(&self.state, &topics.column, &docnos.column, &levels[0], n)
        return _settled(&self.state.status, &self.state.failed_bytes)

    def finish(self, int threads=1, bint check=True, bint unique=False,
               int duplicates=KEEP_ERROR):
        """Group the judgments by topic and check for duplicates, the topics split
        between up to ``threads`` threads by judgments; returns the status.

        A docno twice in a topic stops the table with STATUS_DUPLICATE, or with
        ``duplicates`` KEEP_FIRST / KEEP_LAST (DUPLICATES_FIRST, DUPLICATES_LAST of
        cgcore._trec) the first or last occurrence of each is kept and the others
        dropped; either way :meth:`first_duplicate` names the first repeat by line and
        :attr:`n_duplicates` counts them.

        ``check=False`` (for a table that one run is ranked against, not kept):
        without the check, which the rankers do as they join each topic they meet
        (stopping with STATUS_QRELS_DUPLICATE, after which :meth:`find_duplicates`
        names it), and RunRanker.check_unused_judgments for the topics none met; so
        that a topic's judgments are hashed once, not twice. Not for an indexed table
        (its index is the check) nor with a policy that drops. ``unique=True``: the
        judgments are known to hold no duplicate (a table checked where it was read,
        rebuilt in another process): finished as checked, without checking."""
        cdef int64_t found = -1
        cdef uint8_t* drop = NULL
        cdef QrelsState* q = &self.state
        if not check and (self.indexed or duplicates != KEEP_ERROR) and not unique:
            raise ValueError("an indexed table, or one whose duplicates are dropped, is "
                             "checked as it is finished")
        if unique:
            check = False
        if q.status == OK and not self.finished:
            with nogil:
                cg_take_failed_bytes()
                _qrels_group(q)
                _settled(&q.status, &q.failed_bytes)
            if q.status == OK and check:
                found = self._check_duplicates(threads)
            if found >= 0:              # name the first by line, count them, drop them
                if duplicates != KEEP_ERROR:
                    drop = <uint8_t*>cg_calloc(q.relevance.size + 1, 1)
                    if drop == NULL:
                        found = -2
                if found >= 0:
                    with nogil:
                        found = _find_duplicates(q, duplicates, drop)
                        if found > 0 and drop != NULL:
                            q.status = _drop_rows(q, drop)
                            found = -1
                    free(drop)
            with nogil:
                _qrels_checked(q, found, self.indexed, not check and not unique)
                _settled(&q.status, &q.failed_bytes)
            q.unchecked = q.status == OK and not check and not unique
        self.finished = True
        return q.status

    def find_duplicates(self):
        """For a table finished without its check (see :meth:`finish`): check every
        topic, counting the repeated docnos and naming the first by line (see
        :meth:`first_duplicate`); returns how many. The table stays as it is."""
        cdef int64_t found
        cdef QrelsState* q = &self.state
        if not self.finished or q.status != OK:
            raise ValueError("the table is not finished or has stopped")
        if not q.unchecked:
            return q.n_duplicates
        cg_take_failed_bytes()
        with nogil:
            found = _find_duplicates(q, KEEP_ERROR, NULL)
        if found < -1:
            if found == -2:
                raise MemoryError(cg_take_failed_bytes() or None)
            raise ValueError("a topic has more judgments than the layout holds")
        return found

    @property
    def n_duplicates(self):
        """Repeated docnos found by the check (rows dropped or to be named)."""
        return self.state.n_duplicates

    @property
    def lines_seen(self):
        """Physical lines fed so far."""
        return self.state.lines_seen

    @property
    def stop_offset(self):
        """With STATUS_BAD_LINE from :meth:`feed`: where the line starts in the block."""
        return self.state.stop_offset

    def first_duplicate(self):
        """(topic, docno, line of its first occurrence, line of the repeat) of the first
        repeated docno by line (for a table of columns, line = row + 1), or None."""
        cdef QrelsState* q = &self.state
        if q.n_duplicates == 0:
            return None
        return (_strings_text(&q.topics, q.duplicate_topic)[
                    :_strings_length(&q.topics, q.duplicate_topic)].decode("utf-8"),
                q.duplicate_docno.data[:q.duplicate_docno.size].decode("utf-8")
                if q.duplicate_docno.size else "",
                q.duplicate_first_line, q.duplicate_line)

    cdef int64_t _check_duplicates(self, int threads) except? -4:
        """_check_topics over all topics, in ranges of about equal judgments checked
        side by side (each by a thread); the first range's finding wins, as if checked
        in one pass."""
        cdef QrelsState* q = &self.state
        cdef Py_ssize_t n_topics = _strings_count(&q.topics), t = 0, part, parts
        cdef int64_t found
        parts = max(1, min(threads, q.relevance.size // CHECK_ROWS_PER_THREAD))
        if parts == 1:
            with nogil:
                found = _check_topics(q, 0, n_topics, NULL)
            return found
        bounds = [0]
        for part in range(1, parts):
            while t < n_topics and q.topic_starts[t] < q.relevance.size * part // parts:
                t += 1
            bounds.append(t)
        bounds.append(n_topics)
        results = [(-1, 0)] * parts     # per range: what _check_topics found, and the
                                        # bytes a failed request asked for, if any
        helpers = [threading.Thread(target=self._check_range, args=(results, part,
                                                                     bounds[part],
                                                                     bounds[part + 1]))
                   for part in range(1, parts)]
        for helper in helpers:
            helper.start()
        try:
            self._check_range(results, 0, bounds[0], bounds[1])
        finally:
            for helper in helpers:
                helper.join()
        found, failed = next((result for result in results if result[0] != -1), (-1, 0))
        self.state.failed_bytes = failed
        return found

    def _check_range(self, list results, Py_ssize_t part, Py_ssize_t first, Py_ssize_t stop):
        cdef int64_t found
        cdef size_t failed
        with nogil:
            cg_take_failed_bytes()
            found = _check_topics(&self.state, first, stop, NULL)
            failed = cg_take_failed_bytes()
        results[part] = (found, failed)

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
    def n_rows(self):
        return self.state.relevance.size

    def topics(self):
        """Topic ids in order of first appearance."""
        if self.state.status == RELEASED:
            raise ValueError("the table was released")
        return _strings_list(&self.state.topics)

    def docno_buffers(self):
        """(offsets, data): every judgment's docno, rows in grouped()'s order, as the
        buffers of an Arrow large_string array: int64 offsets (rows + 1) and the bytes
        (uint8). A copy, for the table to travel as Arrow (cumgain.dask)."""
        if not self.finished or self.state.status != OK:
            raise ValueError("the table is not finished or has stopped")
        cdef Py_ssize_t k, r, rows, total = 0
        cdef int64_t base = 0
        cdef Segment* segment
        for k in range(self.state.n_segments):
            total += self.state.segments[k].docnos.size
        offsets = np.empty(self.state.relevance.size + 1, np.int64)
        data = np.empty(total, np.uint8)
        cdef int64_t[::1] out_offsets = offsets
        cdef uint8_t[::1] out_data = data
        out_offsets[0] = 0
        with nogil:
            for k in range(self.state.n_segments):
                segment = &self.state.segments[k]
                rows = segment.doc_starts.size - 1
                for r in range(rows):
                    out_offsets[segment.first_row + r + 1] = base + segment.doc_starts.data[r + 1]
                if segment.docnos.size:
                    memcpy(&out_data[base], segment.docnos.data, segment.docnos.size)
                base += segment.docnos.size
        return offsets, data

    def row_lines(self):
        """The line each judgment was read from, in grouped()'s order (int64, a copy),
        for a table made with ``lines=True``."""
        if not self.finished or self.state.status != OK or self.state.row_lines == NULL:
            raise ValueError("the table is not finished, has stopped, or keeps no lines")
        out = np.empty(self.state.relevance.size, np.int64)
        cdef int64_t[::1] view = out
        if self.state.relevance.size:
            memcpy(&view[0], self.state.row_lines, self.state.relevance.size * 8)
        return out

    def docno_strs(self):
        """Every judgment's docno as a str, in grouped()'s order: an object array."""
        if not self.finished or self.state.status != OK:
            raise ValueError("the table is not finished or has stopped")
        cdef Py_ssize_t k, r
        cdef Segment* segment
        out = np.empty(self.state.relevance.size, object)
        cdef object[:] view = out
        for k in range(self.state.n_segments):
            segment = &self.state.segments[k]
            for r in range(segment.doc_starts.size - 1):
                view[segment.first_row + r] = PyUnicode_DecodeUTF8(
                    segment.docnos.data + segment.doc_starts.data[r],
                    segment.doc_starts.data[r + 1] - segment.doc_starts.data[r], NULL)
        return out

    def grouped(self):
        """(offsets, relevance): the judgments grouped by topic (topics in order of
        first appearance), file order within a topic; relevance is int8 when every
        level is a whole number in [-128, 127] (and none is -0.0), else float64.
        Read-only views of the table's own memory (no copy), which the first call
        hands over to buffers that the table and the views share: the views outlive
        the table, while the docnos and the rest go with it."""
        if not self.finished or self.state.status != OK:
            raise ValueError("the table is not finished or has stopped")
        cdef Py_ssize_t n_topics = _strings_count(&self.state.topics)
        if not self.handed_over:
            self.grouped_owners = (_owning_buffer(self.state.topic_starts),
                                   _owning_buffer(self.state.relevance.data))
            self.handed_over = True
        return (_array(self.state.topic_starts, n_topics + 1, np.int64, self.grouped_owners[0]),
                _array(self.state.relevance.data, self.state.relevance.size,
                       _level_dtype(&self.state.relevance), self.grouped_owners[1]))
