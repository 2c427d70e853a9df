# The ranker's entries that feed it topic by topic (RunRanker in _trec.pyx): a file's
# lines (_run_feed: parsed, checked, and either collected for the topic being read or,
# for a run held by topic, staged and held, see _held.pxd) and Arrow columns grouped by
# topic (_rank_columns). A dict's entry is RunRanker.add_dict (it needs the GIL). Only
# nogil C, inline, so that it compiles into _trec's loops.
from libc.stdint cimport int64_t, uint8_t
from libc.math cimport isnan

from cgcore._buffers cimport (_equal_bytes, _push_bytes, _push_double, _push_int64, _reserve,
                              _same_bytes, cg_prefix_word8)
from cgcore._columns cimport Column, _cell
from cgcore._precision cimport _compared_score
from cgcore._held cimport STAGED, Staged, _hold_group, _hold_staged
from cgcore._rank_topic cimport (RunState, _index_entries, _join_judgments, _rank_current,
                                 _rank_entries, _reserve_entries, _set_entry, _use_topic)
from cgcore._status cimport BAD_LINE, NO_MEMORY, NOT_GROUPED, _stop_code
from cgcore._strings cimport (_hash, _prefetch_slot, _short_add, _short_find, _short_prefetch,
                              _strings_add, _strings_add_new, _strings_add_tagged,
                              _strings_equal, _strings_find_after, _tag)
from cgcore._text cimport (MAX_FIELDS, _next_line, _parse_number, _skipped_line,
                           _valid_utf8, cg_quiet_lines, cg_text_kind)



cdef inline int _rank_columns(RunState* r, const Column* topics, const Column* docnos,
                       const double* scores, const int64_t* starts, const int64_t* order,
                       Py_ssize_t first, Py_ssize_t stop) noexcept nogil:
    """RunRanker.add_columns' work: each topic's entries point into the docno column
    (no copy), then are checked for duplicates, joined and ranked as a file's are."""
    cdef Py_ssize_t g, i, n, row, length
    cdef int64_t topic
    cdef const char* text
    cdef double score
    for g in range(first, stop):
        n = starts[g + 1] - starts[g]
        row = order[starts[g]] if order != NULL else starts[g]
        text = _cell(topics, row, &length)
        topic = _strings_add_new(&r.topics, text, length)
        if topic < 0:
            r.status = NOT_GROUPED if topic == -1 else _stop_code(topic)
            return -1
        if _use_topic(r, _strings_find_after(&r.qrels.topics, r.judgments_topic, text,
                                             length)) != 0 \
                or _reserve_entries(r, n) != 0 \
                or _reserve(<void**>&r.lines.data, &r.lines.capacity, n, 8) != 0:
            r.status = NO_MEMORY
            return -1
        for i in range(n):
            row = order[starts[g] + i] if order != NULL else starts[g] + i
            score = scores[row]
            r.lines_seen += 1
            if isnan(score):
                r.status, r.status_line = BAD_LINE, row + 1
                return -1
            score = _compared_score(score, r.precision)
            text = _cell(docnos, row, &length)
            _set_entry(r, i, text, length, score)
            r.lines.data[i] = row + 1
        r.lines.size = n
        r.n_lines_read += n
        r.ranking_topic = topic
        n = _index_entries(r, n, True)
        if n < 0 or _join_judgments(r, n) != 0 or _rank_entries(r, n) != 0:
            return -1
        r.lines.size = 0
    return 0


cdef inline int _run_feed(RunState* r, const char* text, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t position = 0, length = 0, n_fields, last_tag_start = -1, last_tag_end = -1
    cdef int kind = cg_text_kind(text, size)
    cdef bint ascii = kind >= 1         # then no line needs the UTF-8 check
    cdef bint plain = kind == 2         # ... nor a comment line any check
    cdef Py_ssize_t starts[MAX_FIELDS]
    cdef Py_ssize_t ends[MAX_FIELDS]
    cdef int64_t topic
    cdef const char* row
    cdef const char* tag_row = NULL
    cdef double score = 0.0     # (set by the parse; gcc cannot tell)
    cdef double tag_value
    cdef int parsed, tag_number
    cdef Staged* staged
    cdef Py_ssize_t skipped
    while position < size:
        if text[position] == b'\n' or (plain and text[position] == b'#'):
            skipped = cg_quiet_lines(text + position, size - position, plain, r.max_line,
                                     &r.lines_seen)     # blank and comment lines, in one go
            if skipped > 0:
                position += skipped
                continue
        if text[position] == b'\n':    # a stretch of blank lines, counted in one go
            skipped = position
            while position < size and text[position] == b'\n':
                position += 1
            r.lines_seen += position - skipped
            continue
        r.lines_seen += 1
        skipped = _skipped_line(text, position, size, plain, True, r.max_line)
        if skipped >= 0:                # a comment or blank line: nothing to check
            position = skipped
            continue
        row = text + position
        n_fields = _next_line(text, position, size, starts, ends, &length)
        r.stop_offset = position        # (where the line starts, if it is bad)
        if length > r.max_line or (not ascii and not _valid_utf8(<const uint8_t*>row, length)):
            return _stop_at(r, BAD_LINE)
        position += length + 1
        if n_fields < 0:
            return _stop_at(r, BAD_LINE)
        if n_fields == 0 or row[starts[0]] == b'#':
            continue
        parsed = _parse_number(row + starts[4], ends[4] - starts[4], &score) \
            if n_fields >= 6 else 0
        if parsed < 0:
            return _stop_at(r, NO_MEMORY)
        if parsed > 0 and n_fields > 6:     # fields after a tag that is a number: the
            tag_number = _parse_number(row + starts[5], ends[5] - starts[5], &tag_value)
            if tag_number != 0:             # columns of a docno with a space, shifted
                parsed = -1 if tag_number < 0 else 0
        if parsed < 0:
            return _stop_at(r, NO_MEMORY)
        if parsed == 0 or isnan(score):
            return _stop_at(r, BAD_LINE)
        score = _compared_score(score, r.precision)
        if r.grouping:
            staged = &r.staged[r.n_staged]
            staged.topic, staged.topic_length = row + starts[0], ends[0] - starts[0]
            if staged.topic_length <= 8:       # (a data line of 6 fields: 8 bytes from
                staged.word = cg_prefix_word8(staged.topic, staged.topic_length)  # its start)
            if r.n_staged == 0 and r.current >= 0 and _strings_equal(
                    &r.topics, r.current, staged.topic, staged.topic_length):
                staged.group = r.current
            elif r.n_staged > 0 and _same_topic(staged, &r.staged[r.n_staged - 1]):
                staged.group = -2               # the previous line's topic
            else:                               # looked up when flushed, its slot asked
                staged.group = -1               # for now (see _flush_staged)
                if staged.topic_length <= 8:
                    _short_prefetch(&r.short_topics, staged.word, staged.topic_length)
                else:
                    staged.tag = _tag(_hash(staged.topic, staged.topic_length, 0))
                    _prefetch_slot(&r.topics, staged.tag)
            staged.docno, staged.n = row + starts[2], ends[2] - starts[2]
            staged.score, staged.line, staged.offset = score, r.lines_seen, row - text
            r.n_staged += 1
            if r.n_staged == STAGED and _flush_staged(r) != 0:
                return -1
        else:
            if r.current < 0 or not _strings_equal(&r.topics, r.current, row + starts[0],
                                                   ends[0] - starts[0]):
                if _rank_current(r) != 0:
                    return -1
                topic = _strings_add_new(&r.topics, row + starts[0], ends[0] - starts[0])
                if topic == -1:
                    r.status, r.status_line = NOT_GROUPED, r.lines_seen
                    return -1
                if topic < 0:
                    r.status = _stop_code(topic)
                    return -1
                r.current = topic
                if _use_topic(r, _strings_find_after(&r.qrels.topics, r.judgments_topic,
                                                     row + starts[0], ends[0] - starts[0])) != 0:
                    return -1
            if _push_bytes(&r.docnos, row + starts[2], ends[2] - starts[2]) != 0 \
                    or _push_int64(&r.doc_starts, r.docnos.size) != 0 \
                    or _push_double(&r.scores, score) != 0 \
                    or _push_int64(&r.lines, r.lines_seen) != 0:
                r.status = NO_MEMORY
                return -1
        r.n_lines_read += 1
        tag_row, last_tag_start, last_tag_end = row, starts[5], ends[5]
        if r.n_lines_read == 1:
            if _push_bytes(&r.first_tag, row + starts[5], ends[5] - starts[5]) != 0:
                r.status = NO_MEMORY
                return -1
        elif not r.tags_differ and not _same_bytes(&r.first_tag, row + starts[5],
                                                   ends[5] - starts[5]):
            r.tags_differ = True
    if tag_row != NULL:
        r.tag.size = 0
        if _push_bytes(&r.tag, tag_row + last_tag_start, last_tag_end - last_tag_start) != 0:
            r.status = NO_MEMORY
            return -1
    return _flush_staged(r)         # (the staged docnos point into this block)


cdef inline bint _same_topic(const Staged* a, const Staged* b) noexcept nogil:
    """Whether two lines staged have one topic. Short topics are compared by their
    words, without a branch on their lengths (in a shuffled run they differ at
    random)."""
    if a.topic_length <= 8 and b.topic_length <= 8:
        return (a.topic_length == b.topic_length) & (a.word == b.word)
    return a.topic_length == b.topic_length and _equal_bytes(a.topic, b.topic,
                                                             a.topic_length)


cdef inline int64_t _staged_topic(RunState* r, const Staged* staged) noexcept nogil:
    """The run topic of a line staged (interned if new): a topic of up to 8 bytes by
    its short key (interned and cached the first time), a longer one by its hash's
    tag; as _strings_add."""
    cdef int64_t topic
    if staged.topic_length > 8:
        return _strings_add_tagged(&r.topics, staged.topic, staged.topic_length, staged.tag)
    topic = _short_find(&r.short_topics, staged.word, staged.topic_length)
    if topic >= 0:
        return topic
    topic = _strings_add(&r.topics, staged.topic, staged.topic_length)
    if topic >= 0 and _short_add(&r.short_topics, staged.word, staged.topic_length,
                                 topic) != 0:
        return -2
    return topic


cdef inline int _flush_staged(RunState* r) noexcept nogil:
    """Hold the lines staged, before the block they point into is gone (at the end of a
    feed, and before a bad line is reported: the lines before it were read without a
    fault): first their topics looked up (the slots asked for as they were staged: the
    lookups of a run whose topics come in no order wait for the memory side by side,
    not one after another), then the records held (see _hold_staged). A topic that
    comes back in a ``contiguous`` ranker stops it with NOT_GROUPED at its line (the
    lines before it held); -1 then or when out of memory."""
    cdef Py_ssize_t i, n = r.n_staged
    cdef int64_t topic
    cdef Staged* staged
    r.n_staged = 0
    for i in range(n):
        staged = &r.staged[i]
        if staged.group == -2:
            staged.group = r.staged[i - 1].group
            continue
        if staged.group >= 0:
            continue
        topic = _staged_topic(r, staged)
        if r.contiguous and topic < r.held.n_groups and topic >= 0:
            topic = -1                          # a topic came back after another
        if topic < 0 or _hold_group(&r.held, topic) != 0:
            if _hold_staged(&r.held, r.staged, i) != 0:
                topic = -2
            if topic == -1:
                r.status, r.status_line = NOT_GROUPED, staged.line
                r.stop_offset = staged.offset
            else:
                r.status = _stop_code(topic) if topic < 0 else NO_MEMORY
            return -1
        staged.group = topic
    if n:
        r.current = r.staged[n - 1].group
        if _hold_staged(&r.held, r.staged, n) != 0:
            r.status = NO_MEMORY
            return -1
    return 0


cdef inline int _stop_at(RunState* r, int status) noexcept nogil:
    """Stop at the line being read with ``status``, unless one of the lines staged
    before it stops the ranker first (see _flush_staged); -1."""
    if r.n_staged and _flush_staged(r) != 0:
        return -1
    r.status, r.status_line = status, r.lines_seen
    return -1
