/* The index's per-file work that Python does slowly, in native code.
 *
 * `python_symbols`: top-level Python definitions, the same answers as
 * `symbols._python_reference` (the pure-Python twin, which runs wherever this
 * module was not built). A build calls it for every Python file, and in Python
 * the work per candidate line and per triple-quoted string cost more than
 * everything else a build adds to tantivy's own indexing.
 * `index_text`: a text with every `_` deleted (`tokenize.index_text`), which
 * `str.replace` does in two passes (count, then copy).
 *
 * Every function here mirrors one piece of symbols.py; the comments name it.
 * The text comes from the repository, so it is untrusted: every read is
 * bounds-checked against its length, and nothing is written but Python objects.
 * tests/unit/index/test_symbols.py checks that both give the same results, on
 * the standard library and on generated texts.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>  /* memchr; memmem (Python.h defines _GNU_SOURCE) */

/* A str is always ready from Python 3.12 on (the macro is deprecated there). */
#if PY_VERSION_HEX >= 0x030C0000
#define READY(text) 0
#else
#define READY(text) PyUnicode_READY(text)
#endif

typedef struct {
    int kind;          /* PyUnicode_1BYTE_KIND, 2 or 4 */
    const void *data;
    Py_ssize_t n;
} Text;

static inline Py_UCS4 at(const Text *t, Py_ssize_t i) { return PyUnicode_READ(t->kind, t->data, i); }

static inline int ascii_ident_start(Py_UCS4 c) {  /* [A-Za-z_] */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int word_char(Py_UCS4 c) {  /* `\w` of a str pattern */
    if (c < 128)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    return Py_UNICODE_ISALNUM(c);
}

static inline int blank(Py_UCS4 c) { return c == ' ' || c == '\t'; }  /* [ \t] */

/* str.find(ch, from) for one character: -1 when absent. */
static Py_ssize_t find_char(const Text *t, Py_UCS4 ch, Py_ssize_t from) {
    if (from < 0)
        from = 0;
    if (from >= t->n)
        return -1;
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND: {
        const Py_UCS1 *s = t->data;
        const Py_UCS1 *hit = memchr(s + from, (int)ch, (size_t)(t->n - from));
        return hit == NULL ? -1 : hit - s;
    }
    case PyUnicode_2BYTE_KIND: {
        const Py_UCS2 *s = t->data;
        for (Py_ssize_t i = from; i < t->n; i++)
            if (s[i] == ch)
                return i;
        return -1;
    }
    default: {
        const Py_UCS4 *s = t->data;
        for (Py_ssize_t i = from; i < t->n; i++)
            if (s[i] == ch)
                return i;
        return -1;
    }
    }
}

/* str.find(q * 3, from): three of the quote character `q`. A character that is not
 * `q` cannot be part of the three, so the search looks at every third one (Horspool):
 * at `i`, the last of three that would start at i-2. */
#define FIND_TRIPLE(CHAR)                                                   \
    static Py_ssize_t find_triple_##CHAR(const CHAR *s, Py_ssize_t n, CHAR q, Py_ssize_t from) { \
        for (Py_ssize_t i = from + 2; i < n;) {                                 \
            if (s[i] != q) {                                                    \
                i += 3;                                                         \
                continue;                                                       \
            }                                                                   \
            Py_ssize_t lo = i; /* q at i: the three start at i-2, i-1 or i */   \
            while (lo > i - 2 && lo > from && s[lo - 1] == q)                   \
                lo--;                                                           \
            Py_ssize_t hi = i;                                                  \
            while (hi - lo < 2 && hi + 1 < n && s[hi + 1] == q)                 \
                hi++;                                                           \
            if (hi - lo >= 2)                                                   \
                return lo;                                                      \
            i = hi + 3;                                                         \
        }                                                                       \
        return -1;                                                              \
    }
FIND_TRIPLE(Py_UCS1)
FIND_TRIPLE(Py_UCS2)
FIND_TRIPLE(Py_UCS4)

static Py_ssize_t find_triple(const Text *t, Py_UCS4 q, Py_ssize_t from) {
    if (from < 0)
        from = 0;
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND:
        return find_triple_Py_UCS1(t->data, t->n, (Py_UCS1)q, from);
    case PyUnicode_2BYTE_KIND:
        return find_triple_Py_UCS2(t->data, t->n, (Py_UCS2)q, from);
    default:
        return find_triple_Py_UCS4(t->data, t->n, q, from);
    }
}

/* str.rfind("\n", lo, hi) */
static Py_ssize_t rfind_newline(const Text *t, Py_ssize_t lo, Py_ssize_t hi) {
    if (hi > t->n)
        hi = t->n;
    for (Py_ssize_t i = hi - 1; i >= lo; i--)
        if (at(t, i) == '\n')
            return i;
    return -1;
}

/* `_LINE_TOKEN.search(text, at)` for a one-line string or a comment starting at
 * `start` (not a triple quote): where the token ends. */
static Py_ssize_t line_token_end(const Text *t, Py_ssize_t start) {
    Py_UCS4 c = at(t, start);
    if (c == '#') {  /* \#[^\n]*+ */
        Py_ssize_t nl = find_char(t, '\n', start);
        return nl < 0 ? t->n : nl;
    }
    /* "(?:[^"\\\n]++|\\.)*+"?  (and the same with ') */
    Py_ssize_t k = start + 1;
    while (k < t->n) {
        Py_UCS4 d = at(t, k);
        if (d == c || d == '\n')
            break;
        if (d == '\\') {
            if (k + 1 < t->n && at(t, k + 1) != '\n') {
                k += 2;
                continue;
            }
            break;
        }
        k++;
    }
    if (k < t->n && at(t, k) == c)
        k++;
    return k;
}

static inline int is_triple_at(const Text *t, Py_ssize_t i) {
    if (i + 3 > t->n)
        return 0;
    Py_UCS4 c = at(t, i);
    return (c == '"' || c == '\'') && at(t, i + 1) == c && at(t, i + 2) == c;
}

/* `_opening_quote`: sets *opening (or -1) and *resume (or -1). */
static void opening_quote(const Text *t, Py_ssize_t line_start, Py_ssize_t quotes, Py_ssize_t *opening, Py_ssize_t *resume) {
    Py_ssize_t pos = line_start;
    for (;;) {
        Py_ssize_t token = -1;
        for (Py_ssize_t i = pos; i < t->n; i++) {
            Py_UCS4 c = at(t, i);
            if (c == '"' || c == '\'' || c == '#') {
                token = i;
                break;
            }
        }
        if (token < 0 || token > quotes)
            break;
        if (is_triple_at(t, token)) {
            *opening = token;
            *resume = -1;
            return;
        }
        Py_ssize_t end = line_token_end(t, token);
        if (end > quotes) {
            *opening = -1;
            *resume = end;
            return;
        }
        pos = end;
    }
    *opening = quotes;
    *resume = -1;
}

static inline int py_isspace_run(const Text *t, Py_ssize_t lo, Py_ssize_t hi) {  /* text[lo:hi].isspace(), lo < hi */
    for (Py_ssize_t i = lo; i < hi; i++) {
        Py_UCS4 c = at(t, i);
        if (c < 128 ? !(c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) : !Py_UNICODE_ISSPACE(c))
            return 0;
    }
    return 1;
}

typedef struct {
    Py_ssize_t *items;  /* start, end pairs */
    Py_ssize_t len, cap;
} Spans;

static int spans_push(Spans *sp, Py_ssize_t start, Py_ssize_t end) {
    if (sp->len + 2 > sp->cap) {
        Py_ssize_t cap = sp->cap ? sp->cap * 2 : 64;
        Py_ssize_t *items = PyMem_Realloc(sp->items, (size_t)cap * sizeof(Py_ssize_t));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        sp->items = items;
        sp->cap = cap;
    }
    sp->items[sp->len++] = start;
    sp->items[sp->len++] = end;
    return 0;
}

/* `_triple_strings`: (start, end) of each triple-quoted string, in order. */
static int triple_strings(const Text *t, Spans *sp) {
    Py_ssize_t pos = 0;
    Py_ssize_t dbl = find_triple(t, '"', 0), sgl = find_triple(t, '\'', 0);
    while (dbl >= 0 || sgl >= 0) {
        Py_ssize_t quotes = (dbl < 0 || (sgl >= 0 && sgl < dbl)) ? sgl : dbl;
        Py_ssize_t line_start = rfind_newline(t, pos, quotes) + 1;
        if (line_start == 0)
            line_start = pos;
        if (line_start != quotes && !py_isspace_run(t, line_start, quotes)) {
            int suspicious = 0;
            for (Py_ssize_t i = line_start; i < quotes && !suspicious; i++) {
                Py_UCS4 c = at(t, i);
                suspicious = c == '#' || c == '"' || c == '\'';
            }
            if (suspicious) {
                Py_ssize_t opening, resume;
                opening_quote(t, line_start, quotes, &opening, &resume);
                if (resume >= 0) {
                    pos = resume;
                    if (dbl != -1 && dbl < pos)
                        dbl = find_triple(t, '"', pos);
                    if (sgl != -1 && sgl < pos)
                        sgl = find_triple(t, '\'', pos);
                    continue;
                }
                quotes = opening;
            }
        }
        Py_UCS4 mark = at(t, quotes);
        Py_ssize_t from = quotes + 3, end;
        for (;;) {
            end = find_triple(t, mark, from);
            if (end < 0) {
                end = t->n;
                break;
            }
            Py_ssize_t before = end - 1;
            while (before > quotes && at(t, before) == '\\')
                before--;
            if ((end - 1 - before) % 2 == 0) {
                end += 3;
                break;
            }
            from = end + 1;
        }
        if (spans_push(sp, quotes, end) < 0)
            return -1;
        pos = end;
        if (dbl != -1 && dbl < pos)
            dbl = find_triple(t, '"', pos);
        if (sgl != -1 && sgl < pos)
            sgl = find_triple(t, '\'', pos);
    }
    return 0;
}

static inline int starts_with(const Text *t, Py_ssize_t i, const char *word, Py_ssize_t len) {
    if (i + len > t->n)
        return 0;
    for (Py_ssize_t k = 0; k < len; k++)
        if (at(t, i + k) != (Py_UCS4)(unsigned char)word[k])
            return 0;
    return 1;
}

static inline Py_ssize_t skip_blanks(const Text *t, Py_ssize_t i) {
    while (i < t->n && blank(at(t, i)))
        i++;
    return i;
}

static inline Py_ssize_t skip_word(const Text *t, Py_ssize_t i) {
    while (i < t->n && word_char(at(t, i)))
        i++;
    return i;
}

/* `keyword[ \t]+([A-Za-z_]\w*)` at i: the name's start (its end in *name_end), or -1. */
static Py_ssize_t keyword_name(const Text *t, Py_ssize_t i, const char *keyword, Py_ssize_t len, Py_ssize_t *name_end) {
    if (!starts_with(t, i, keyword, len) || i + len >= t->n || !blank(at(t, i + len)))
        return -1;
    Py_ssize_t name = skip_blanks(t, i + len);
    if (name >= t->n || !ascii_ident_start(at(t, name)))
        return -1;
    *name_end = skip_word(t, name);
    return name;
}

typedef struct {
    int group;  /* 1 def, 2 class, 3 assignment; 0: no match */
    Py_ssize_t name, name_end, end;
} DefMatch;

/* `_PY_DEF.match(text, start)`; text[start] is a letter or `_`. */
static DefMatch match_def(const Text *t, Py_ssize_t start) {
    DefMatch m = {0, 0, 0, 0};
    Py_ssize_t name_end;
    /* (?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*) */
    if (starts_with(t, start, "async", 5) && start + 5 < t->n && blank(at(t, start + 5))) {
        Py_ssize_t name = keyword_name(t, skip_blanks(t, start + 5), "def", 3, &name_end);
        if (name >= 0)
            return (DefMatch){1, name, name_end, name_end};
    }
    Py_ssize_t name = keyword_name(t, start, "def", 3, &name_end);
    if (name >= 0)
        return (DefMatch){1, name, name_end, name_end};
    /* class[ \t]+([A-Za-z_]\w*) */
    name = keyword_name(t, start, "class", 5, &name_end);
    if (name >= 0)
        return (DefMatch){2, name, name_end, name_end};
    /* ([A-Za-z_]\w*)[ \t]*(?::[^=\n]*(?:=(?!=)|$)|=(?!=)) */
    name_end = skip_word(t, start);
    Py_ssize_t j = skip_blanks(t, name_end);
    if (j >= t->n)
        return m;
    Py_UCS4 c = at(t, j);
    if (c == ':') {
        Py_ssize_t k = j + 1;
        while (k < t->n && at(t, k) != '=' && at(t, k) != '\n')
            k++;
        if (k >= t->n || at(t, k) == '\n')
            return (DefMatch){3, start, name_end, k};
        if (k + 1 < t->n && at(t, k + 1) == '=')
            return m;
        return (DefMatch){3, start, name_end, k + 1};
    }
    if (c == '=' && !(j + 1 < t->n && at(t, j + 1) == '='))
        return (DefMatch){3, start, name_end, j + 1};
    return m;
}

/* `_CONST_NAME.fullmatch`: [A-Z][A-Z0-9_]* */
static int const_name(const Text *t, Py_ssize_t lo, Py_ssize_t hi) {
    Py_UCS4 c = at(t, lo);
    if (!(c >= 'A' && c <= 'Z'))
        return 0;
    for (Py_ssize_t i = lo + 1; i < hi; i++) {
        c = at(t, i);
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

static PyObject *kind_names[4];

static int add_symbol(PyObject *out, PyTypeObject *symbol_type, PyObject *text, Py_ssize_t lo, Py_ssize_t hi, int group, Py_ssize_t line) {
    PyObject *name = PyUnicode_Substring(text, lo, hi);
    if (name == NULL)
        return -1;
    PyObject *number = PyLong_FromSsize_t(line);
    if (number == NULL) {
        Py_DECREF(name);
        return -1;
    }
    PyObject *fields = PyTuple_Pack(3, name, kind_names[group], number);
    Py_DECREF(name);
    Py_DECREF(number);
    if (fields == NULL)
        return -1;
    PyObject *args = PyTuple_Pack(1, fields);
    Py_DECREF(fields);
    if (args == NULL)
        return -1;
    PyObject *symbol = PyTuple_Type.tp_new(symbol_type, args, NULL);  /* tuple.__new__(Symbol, fields) */
    Py_DECREF(args);
    if (symbol == NULL)
        return -1;
    int failed = PyList_Append(out, symbol);
    Py_DECREF(symbol);
    return failed;
}

/* `_python`: the symbols, as `symbol_type` (a tuple subclass: name, kind, line). */
static PyObject *python_symbols(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyType_Check(args[1])
        || !PyType_IsSubtype((PyTypeObject *)args[1], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "python_symbols(text: str, symbol_type: tuple subclass)");
        return NULL;
    }
    PyObject *text = args[0];
    PyTypeObject *symbol_type = (PyTypeObject *)args[1];
    if (READY(text) < 0)
        return NULL;
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Spans spans = {NULL, 0, 0};
    int have_spans = 0;
    Py_ssize_t inside = 0;
    Py_ssize_t newlines = 0;  /* newlines before `from` */
    Py_ssize_t from = 0;
    int first = t.n > 0 && ascii_ident_start(at(&t, 0));
    for (;;) {
        Py_ssize_t here;
        if (first) {  /* the text's first line */
            here = 0;
            first = 0;
        } else {  /* the next `\n[A-Za-z_]`, counting the lines on the way */
            Py_ssize_t nl = find_char(&t, '\n', from);
            while (nl >= 0) {
                newlines++;
                from = nl + 1;
                if (from < t.n && ascii_ident_start(at(&t, from)))
                    break;
                nl = find_char(&t, '\n', from);
            }
            if (nl < 0)
                break;
            here = from;
        }
        Py_ssize_t line = newlines + 1;
        DefMatch m = match_def(&t, here);
        if (m.group == 0)
            continue;
        if (!have_spans) {
            if (triple_strings(&t, &spans) < 0)
                goto fail;
            have_spans = 1;
        }
        Py_ssize_t newline = here - 1;
        while (inside < spans.len && spans.items[inside + 1] <= newline)
            inside += 2;
        if (inside < spans.len && spans.items[inside] <= newline)
            continue;  /* inside a triple-quoted string */
        if (m.group != 3) {
            if (add_symbol(out, symbol_type, text, m.name, m.name_end, m.group, line) < 0)
                goto fail;
            continue;
        }
        /* An assignment: its UPPER_CASE targets, `A = b = C = 1` included (`_CHAINED`). */
        if (const_name(&t, m.name, m.name_end) && add_symbol(out, symbol_type, text, m.name, m.name_end, 3, line) < 0)
            goto fail;
        Py_ssize_t end = m.end;
        for (;;) {
            Py_ssize_t name = skip_blanks(&t, end);
            if (name >= t.n || !ascii_ident_start(at(&t, name)))
                break;
            Py_ssize_t name_end = skip_word(&t, name);
            Py_ssize_t eq = skip_blanks(&t, name_end);
            if (eq >= t.n || at(&t, eq) != '=' || (eq + 1 < t.n && at(&t, eq + 1) == '='))
                break;
            if (const_name(&t, name, name_end) && add_symbol(out, symbol_type, text, name, name_end, 3, line) < 0)
                goto fail;
            end = eq + 1;
        }
    }
    PyMem_Free(spans.items);
    return out;
fail:
    PyMem_Free(spans.items);
    Py_DECREF(out);
    return NULL;
}

/* `text.replace("_", "")` in one pass. */
static PyObject *index_text(PyObject *module, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "index_text(text: str)");
        return NULL;
    }
    if (READY(text) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Text t = {kind, data, n};
    if (find_char(&t, '_', 0) < 0)
        return Py_NewRef(text);
    /* The result is no wider than the text; PyUnicode_New wants the largest character. */
    Py_UCS4 maxchar = PyUnicode_IS_ASCII(text) ? 127 : PyUnicode_MAX_CHAR_VALUE(text);
    PyObject *out = PyUnicode_New(n - 1, maxchar);  /* at least one `_` goes; shrunk below */
    if (out == NULL)
        return NULL;
    Py_ssize_t k = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = data, *p = s, *end = s + n;
        Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
        while (p < end) {
            const Py_UCS1 *hit = memchr(p, '_', (size_t)(end - p));
            const Py_UCS1 *stop = hit == NULL ? end : hit;
            memcpy(o + k, p, (size_t)(stop - p));
            k += stop - p;
            p = hit == NULL ? end : hit + 1;
        }
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *s = data;
        Py_UCS2 *o = PyUnicode_2BYTE_DATA(out);
        for (Py_ssize_t i = 0; i < n; i++)
            if (s[i] != '_')
                o[k++] = s[i];
    } else {
        const Py_UCS4 *s = data;
        Py_UCS4 *o = PyUnicode_4BYTE_DATA(out);
        for (Py_ssize_t i = 0; i < n; i++)
            if (s[i] != '_')
                o[k++] = s[i];
    }
    /* Deleting `_` leaves the widest character in, so the kind stays canonical. */
    if (k != n - 1 && PyUnicode_Resize(&out, k) < 0)
        return NULL;
    return out;
}

static PyMethodDef methods[] = {
    {"index_text", (PyCFunction)index_text, METH_O,
     "index_text(text) -> str: text with every `_` deleted, as tokenize.index_text."},
    {"python_symbols", (PyCFunction)(void (*)(void))python_symbols, METH_FASTCALL,
     "python_symbols(text, symbol_type) -> list: top-level definitions, as symbols._python finds them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    static const char *names[4] = {"", "function", "class", "const"};
    for (int i = 0; i < 4; i++) {
        if (kind_names[i] == NULL && (kind_names[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return NULL;
    }
    return PyModule_Create(&module_def);
}
