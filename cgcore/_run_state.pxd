# A ranker's state beyond one topic (RunRanker in _trec.pyx): joining the next part's
# (its tags, its repeated docnos, rows that follow in one output), gathering the parts
# held topics were ranked in, and freeing it. Only nogil C, inline.
from libc.stdint cimport int64_t
from libc.stdlib cimport free
from libc.string cimport memmove

from cgcore._buffers cimport _extend, _level_bytes, _same_bytes
from cgcore._held cimport _held_free
from cgcore._rank_topic cimport RunState
from cgcore._status cimport NO_MEMORY, OK
from cgcore._strings cimport _strings_free


cdef inline void _take_following_rows(RunState* r, RunState* o) noexcept nogil:
    """Count ``o``'s borrowed rows, which follow ``r``'s in the same arrays, as ``r``'s."""
    if r.out_levels.capacity == 0:      # (r's range had none)
        r.out_levels.data, r.out_judged.data = o.out_levels.data, o.out_judged.data
        r.out_scores.data = o.out_scores.data
    r.out_levels.size += o.out_levels.size
    r.out_levels.capacity += o.out_levels.capacity
    r.out_judged.size += o.out_judged.size
    r.out_judged.capacity += o.out_judged.capacity
    r.out_scores.size += o.out_scores.size
    r.out_scores.capacity += o.out_scores.capacity
    o.out_levels.data, o.out_judged.data, o.out_scores.data = NULL, NULL, NULL
    o.out_levels.size = o.out_judged.size = o.out_scores.size = 0
    o.out_levels.capacity = o.out_judged.capacity = o.out_scores.capacity = 0


cdef inline void _free_state(RunState* r) noexcept nogil:
    """Free what a ranker's state holds (but rows it borrows)."""
    _strings_free(&r.topics)
    free(r.short_topics.slots)
    free(r.docnos.data)
    free(r.doc_starts.data)
    free(r.scores.data)
    free(r.lines.data)
    free(r.entries)
    free(r.ranked)
    free(r.seen)
    free(r.scratch)
    free(r.batch_judgments.data)
    free(r.batch_ends.data)
    free(r.counts.data)
    free(r.judgment_topics.data)
    if not r.rows_borrowed:
        free(r.out_levels.data)
        free(r.out_scores.data)
        free(r.out_judged.data)
    free(r.tag.data)
    free(r.first_tag.data)
    free(r.duplicate_docno.data)
    _held_free(&r.held)


cdef inline int _take_tags(RunState* r, RunState* o) noexcept nogil:
    """The tags of ``o`` (the next part of the same run) after ``r``'s: the last line's
    tag, and whether all agree; -1 when out of memory."""
    if o.n_lines_read == 0:
        return 0
    if _extend(<void**>&r.tag.data, &r.tag.size, &r.tag.capacity, o.tag.data, o.tag.size, 1,
               True) != 0:
        return -1
    if r.n_lines_read == 0:
        if _extend(<void**>&r.first_tag.data, &r.first_tag.size, &r.first_tag.capacity,
                   o.first_tag.data, o.first_tag.size, 1, True) != 0:
            return -1
        r.tags_differ = o.tags_differ
    elif o.tags_differ or not _same_bytes(&r.first_tag, o.first_tag.data, o.first_tag.size):
        r.tags_differ = True
    return 0


cdef inline int _take_duplicates(RunState* r, RunState* o, int64_t shift,
                          int64_t topic_shift) noexcept nogil:
    """Count ``o``'s repeated docnos with ``r``'s, its first (its lines ``shift`` later,
    its topic ``topic_shift`` on) named if it comes first; -1 when out of memory."""
    if o.n_duplicates == 0:
        return 0
    if r.n_duplicates == 0 or o.duplicate_line + shift < r.duplicate_line:
        r.duplicate_line = o.duplicate_line + shift
        r.duplicate_first_line = o.duplicate_first_line + shift
        r.duplicate_topic = o.duplicate_topic + topic_shift
        if _extend(<void**>&r.duplicate_docno.data, &r.duplicate_docno.size,
                   &r.duplicate_docno.capacity, o.duplicate_docno.data,
                   o.duplicate_docno.size, 1, True) != 0:
            return -1
    r.n_duplicates += o.n_duplicates
    return 0


cdef inline void _gather_parts(RunState* r, RunState* parts, Py_ssize_t n_parts) noexcept nogil:
    """The rankings of ``parts`` (held topics ranked in parts, see RunRanker.finish) as
    ``r``'s: their counts and qrels topics in order,
    their rows moved together (a part that dropped repeated docnos wrote fewer than
    it had room for), their repeated docnos counted; the first part that stopped
    gives the status."""
    cdef RunState* sub
    cdef Py_ssize_t part, item = _level_bytes(&r.out_levels), n
    for part in range(n_parts):
        sub = &parts[part]
        if sub.status != OK:
            r.status, r.failed_bytes = sub.status, sub.failed_bytes
            return
        n = sub.out_levels.size
        if <char*>sub.out_levels.data != <char*>r.out_levels.data + r.out_levels.size * item:
            memmove(<char*>r.out_levels.data + r.out_levels.size * item,
                    sub.out_levels.data, n * item)
            memmove(r.out_judged.data + r.out_judged.size, sub.out_judged.data, n)
            if r.keep_scores:
                memmove(r.out_scores.data + r.out_scores.size, sub.out_scores.data, n * 8)
        r.out_levels.size += n
        r.out_judged.size += n
        if r.keep_scores:
            r.out_scores.size += n
        if _extend(<void**>&r.counts.data, &r.counts.size, &r.counts.capacity,
                   sub.counts.data, sub.counts.size, 8) != 0 \
                or _extend(<void**>&r.judgment_topics.data, &r.judgment_topics.size,
                           &r.judgment_topics.capacity, sub.judgment_topics.data,
                           sub.judgment_topics.size, 8) != 0 \
                or _take_duplicates(r, sub, 0, 0) != 0:
            r.status = NO_MEMORY
            return
