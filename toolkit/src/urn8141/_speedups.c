/* The URN check of urn8141.check, in one C call: RFC 8141 syntax
 * (section 2), the namespace profile's NSS syntax run as a DFA table, its
 * check-digit validators (Python callables), and the namespace normal form
 * (section 3.1, then the profile's steps, 3.2).
 *
 * It is an accelerator, never the reference: urn8141/check.py's
 * check_python() is, and tests/urns/test_speedups.py holds the two equal on the
 * corpus, on every shipped profile's examples and on random text. Anything this
 * file does not handle it declines by returning None, and the caller takes the
 * Python path: text that is not ASCII, that is not a URN (the Python path says
 * where and why), or whose profile has no table (a step the table cannot express,
 * or a DFA past its bound).
 *
 * Hostile input: every index is checked against the length before it is read;
 * each character is read a bounded number of times (linear time); the only
 * allocation is the result and, for an NSS longer than the stack buffer, one
 * buffer of its length; no recursion. The DFA table comes from
 * urn8141.dfa (a bytes object) and each step is bounds-checked here
 * anyway, so a malformed table raises ValueError instead of reading past it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Steps of the namespace normal form (urn8141.profiles.TABLE_STEPS). */
enum {
    STEP_LOWER = 1,             /* lower-case the NSS outside percent-encodings */
    STEP_LOWER_PREFIX = 2,      /* ... up to its first "-" */
    STEP_REMOVE_HYPHENS = 3,    /* remove every "-" */
    STEP_UPPER_X = 4,           /* "x" -> "X" */
    STEP_LOWER_HEX = 5,         /* A-F -> a-f outside percent-encodings */
    STEP_LOWER_FIRST_PART = 6,  /* lower-case up to the first ":" outside pct */
};

static PyTypeObject *checked_type = NULL; /* urn8141.check.Checked */
static PyObject *machine_name = NULL;     /* "_machine" */

/* RFC 3986 pchar without pct-encoded: unreserved / sub-delims / ":" / "@" */
static unsigned char PCHAR[128];

static void
init_tables(void)
{
    const char *set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                      "-._~!$&'()*+,;=:@";
    for (const char *p = set; *p; p++)
        PCHAR[(unsigned char)*p] = 1;
}

static inline int
is_hex(Py_UCS1 c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int
is_alnum(Py_UCS1 c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline Py_UCS1
lower(Py_UCS1 c)
{
    return (c >= 'A' && c <= 'Z') ? (Py_UCS1)(c + 32) : c;
}

enum { RUN_NSS, RUN_R, RUN_Q };

/* The end of the run of component characters from i: pchar, "%" HEXDIG HEXDIG,
 * "/"; for the r-component also "?" not followed by "="; for the q- and
 * f-components also "?". -1 for a "%" that does not begin a percent-encoding
 * (never valid anywhere in a URN). */
static Py_ssize_t
run(const Py_UCS1 *t, Py_ssize_t i, Py_ssize_t n, int kind)
{
    while (i < n) {
        Py_UCS1 c = t[i];
        if (c < 128 && PCHAR[c]) {
            i++;
        }
        else if (c == '/') {
            i++;
        }
        else if (c == '%') {
            if (i + 2 >= n || !is_hex(t[i + 1]) || !is_hex(t[i + 2]))
                return -1;
            i += 3;
        }
        else if (c == '?' && kind == RUN_Q) {
            i++;
        }
        else if (c == '?' && kind == RUN_R && !(i + 1 < n && t[i + 1] == '=')) {
            i++;
        }
        else {
            break;
        }
    }
    return i;
}

/* A component's first character: pchar or "%" (not "/" nor "?"). */
static inline int
starts_component(const Py_UCS1 *t, Py_ssize_t i, Py_ssize_t n)
{
    return i < n && ((t[i] < 128 && PCHAR[t[i]]) || t[i] == '%');
}

/* A component from ``start`` (first character pchar or "%", then its run): its end, or
 * -1 when there is none there or a "%" does not begin a percent-encoding. */
static Py_ssize_t
component(const Py_UCS1 *t, Py_ssize_t start, Py_ssize_t n, int kind)
{
    return starts_component(t, start, n) ? run(t, start, n, kind) : -1;
}

static PyObject *
ascii_string(const Py_UCS1 *p, Py_ssize_t len)
{
    PyObject *s = PyUnicode_New(len, 127);
    if (s != NULL && len)
        memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)len);
    return s;
}

/* Lower-case buf[from..to) outside percent-encodings. */
static void
lower_outside_pct(Py_UCS1 *buf, Py_ssize_t from, Py_ssize_t to, int hex_only)
{
    Py_ssize_t i = from;
    while (i < to) {
        if (buf[i] == '%') { /* a percent-encoding (checked valid): skip it whole */
            i += 3;
            continue;
        }
        if (!hex_only || (buf[i] >= 'A' && buf[i] <= 'F'))
            buf[i] = lower(buf[i]);
        i++;
    }
}

static Py_ssize_t
find_char(const Py_UCS1 *buf, Py_ssize_t len, Py_UCS1 c)
{
    const void *at = memchr(buf, c, (size_t)len);
    return at ? (const Py_UCS1 *)at - buf : len;
}

/* Apply the steps to the NSS in buf (already with upper-case percent-encodings);
 * return its new length, or -1 (with ValueError) for an unknown step. */
static Py_ssize_t
apply_steps(Py_UCS1 *buf, Py_ssize_t len, const char *steps, Py_ssize_t nsteps)
{
    for (Py_ssize_t s = 0; s < nsteps; s++) {
        switch (steps[s]) {
        case STEP_LOWER:
            lower_outside_pct(buf, 0, len, 0);
            break;
        case STEP_LOWER_PREFIX:
            lower_outside_pct(buf, 0, find_char(buf, len, '-'), 0);
            break;
        case STEP_LOWER_FIRST_PART:
            lower_outside_pct(buf, 0, find_char(buf, len, ':'), 0);
            break;
        case STEP_LOWER_HEX:
            lower_outside_pct(buf, 0, len, 1);
            break;
        case STEP_UPPER_X:
            for (Py_ssize_t i = 0; i < len; i++)
                if (buf[i] == 'x')
                    buf[i] = 'X';
            break;
        case STEP_REMOVE_HYPHENS: {
            Py_ssize_t out = 0;
            for (Py_ssize_t i = 0; i < len; i++)
                if (buf[i] != '-')
                    buf[out++] = buf[i];
            len = out;
            break;
        }
        default:
            PyErr_SetString(PyExc_ValueError, "unknown normal-form step in a profile table");
            return -1;
        }
    }
    return len;
}

/* Run the DFA: 1 if the NSS fits, 0 if not, -1 (ValueError) if the table is bad. */
static int
run_dfa(PyObject *classes, PyObject *trans, PyObject *accept, Py_ssize_t nclasses,
        const Py_UCS1 *nss, Py_ssize_t len)
{
    if (!PyBytes_Check(classes) || !PyBytes_Check(trans) || !PyBytes_Check(accept)
        || PyBytes_GET_SIZE(classes) != 128 || nclasses <= 0 || nclasses > 256) {
        PyErr_SetString(PyExc_ValueError, "malformed profile table");
        return -1;
    }
    const unsigned char *cls = (const unsigned char *)PyBytes_AS_STRING(classes);
    const unsigned char *tr = (const unsigned char *)PyBytes_AS_STRING(trans);
    const char *acc = PyBytes_AS_STRING(accept);
    Py_ssize_t nstates = PyBytes_GET_SIZE(accept);
    Py_ssize_t trlen = PyBytes_GET_SIZE(trans);
    /* nclasses <= 256 (a class is a byte), so this product stays far from overflow
     * for any table a bytes object can hold. */
    if (nstates < 2 || nstates > PY_SSIZE_T_MAX / 512 || trlen != nstates * nclasses * 2) {
        PyErr_SetString(PyExc_ValueError, "malformed profile table");
        return -1;
    }
    Py_ssize_t state = 1; /* 0 is the dead state, 1 the start */
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_ssize_t k = cls[nss[i] & 0x7f];
        if (k >= nclasses) {
            PyErr_SetString(PyExc_ValueError, "malformed profile table");
            return -1;
        }
        Py_ssize_t at = (state * nclasses + k) * 2;
        state = tr[at] | (tr[at + 1] << 8);
        if (state == 0)
            return 0;
        if (state >= nstates) {
            PyErr_SetString(PyExc_ValueError, "malformed profile table");
            return -1;
        }
    }
    return acc[state] != 0;
}

#define STACK_NSS 512

/* check(text, profiles) -> Checked | None
 *
 * ``profiles`` maps a lower-case NID to an object whose ``_machine`` is None
 * (decline) or a tuple (classes: bytes | None, trans: bytes, accept: bytes,
 * nclasses: int, steps: bytes, validators: tuple, judges: bool). */
static PyObject *
check(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "check(text, profiles)");
        return NULL;
    }
    PyObject *text = args[0], *profiles = args[1];
    if (checked_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
        return NULL;
    }
    if (!PyUnicode_Check(text) || !PyUnicode_IS_ASCII(text) || !PyDict_Check(profiles))
        Py_RETURN_NONE;
    const Py_UCS1 *t = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);

    /* "urn" ":" NID ":" */
    if (n < 8 || lower(t[0]) != 'u' || lower(t[1]) != 'r' || lower(t[2]) != 'n' || t[3] != ':')
        Py_RETURN_NONE;
    Py_ssize_t i = 4;
    while (i < n && (is_alnum(t[i]) || t[i] == '-'))
        i++;
    Py_ssize_t nid_len = i - 4;
    if (nid_len < 2 || nid_len > 32 || i >= n || t[i] != ':' || !is_alnum(t[4])
        || !is_alnum(t[i - 1]))
        Py_RETURN_NONE;
    /* NSS = pchar *(pchar / "/") */
    Py_ssize_t nss_start = i + 1;
    Py_ssize_t nss_end = component(t, nss_start, n, RUN_NSS);
    if (nss_end < 0)
        Py_RETURN_NONE;
    /* [ "?+" r-component ] [ "?=" q-component ] [ "#" f-component ] */
    Py_ssize_t r_start = -1, r_end = -1, q_start = -1, q_end = -1, f_start = -1;
    i = nss_end;
    if (i + 1 < n && t[i] == '?' && t[i + 1] == '+') {
        r_start = i + 2;
        if ((i = r_end = component(t, r_start, n, RUN_R)) < 0)
            Py_RETURN_NONE;
    }
    if (i + 1 < n && t[i] == '?' && t[i + 1] == '=') {
        q_start = i + 2;
        if ((i = q_end = component(t, q_start, n, RUN_Q)) < 0)
            Py_RETURN_NONE;
    }
    if (i < n && t[i] == '#') {
        f_start = i + 1;
        i = run(t, f_start, n, RUN_Q);
        if (i < 0)
            Py_RETURN_NONE;
    }
    if (i != n)
        Py_RETURN_NONE;

    /* The profile, by the NID in lower case. */
    Py_UCS1 key_buf[32];
    for (Py_ssize_t k = 0; k < nid_len; k++)
        key_buf[k] = lower(t[4 + k]);
    PyObject *key = ascii_string(key_buf, nid_len);
    if (key == NULL)
        return NULL;
    PyObject *profile = PyDict_GetItemWithError(profiles, key); /* borrowed */
    if (profile == NULL && PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *machine = NULL;
    if (profile != NULL && profile != Py_None) {
        machine = PyObject_GetAttr(profile, machine_name);
        if (machine == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        if (machine == Py_None) { /* a profile the table cannot express */
            Py_DECREF(machine);
            Py_DECREF(key);
            Py_RETURN_NONE;
        }
        if (!PyTuple_Check(machine) || PyTuple_GET_SIZE(machine) != 7) {
            Py_DECREF(machine);
            Py_DECREF(key);
            PyErr_SetString(PyExc_ValueError, "malformed profile table");
            return NULL;
        }
    }

    PyObject *result = NULL, *nss = NULL, *verdict = NULL;
    Py_UCS1 stack[STACK_NSS];
    Py_UCS1 *buf = stack;
    Py_ssize_t nss_len = nss_end - nss_start;
    const Py_UCS1 *nss_text = t + nss_start;

    nss = ascii_string(nss_text, nss_len);
    if (nss == NULL)
        goto done;

    /* nss_valid: None when the profile judges nothing (or there is none) */
    verdict = Py_None;
    Py_INCREF(verdict);
    const char *steps = NULL;
    Py_ssize_t nsteps = 0;
    if (machine != NULL) {
        PyObject *classes = PyTuple_GET_ITEM(machine, 0);
        PyObject *validators = PyTuple_GET_ITEM(machine, 5);
        PyObject *step_bytes = PyTuple_GET_ITEM(machine, 4);
        int judges = PyObject_IsTrue(PyTuple_GET_ITEM(machine, 6));
        Py_ssize_t nclasses = PyLong_AsSsize_t(PyTuple_GET_ITEM(machine, 3));
        if (judges < 0 || (nclasses == -1 && PyErr_Occurred()))
            goto done;
        if (!PyBytes_Check(step_bytes) || !PyTuple_Check(validators)) {
            PyErr_SetString(PyExc_ValueError, "malformed profile table");
            goto done;
        }
        steps = PyBytes_AS_STRING(step_bytes);
        nsteps = PyBytes_GET_SIZE(step_bytes);
        if (judges) {
            int ok = 1;
            if (classes != Py_None) {
                ok = run_dfa(classes, PyTuple_GET_ITEM(machine, 1), PyTuple_GET_ITEM(machine, 2),
                             nclasses, nss_text, nss_len);
                if (ok < 0)
                    goto done;
            }
            for (Py_ssize_t v = 0; ok && v < PyTuple_GET_SIZE(validators); v++) {
                PyObject *problem = PyObject_CallOneArg(PyTuple_GET_ITEM(validators, v), nss);
                if (problem == NULL)
                    goto done;
                ok = problem == Py_None;
                Py_DECREF(problem);
            }
            Py_SETREF(verdict, PyBool_FromLong(ok));
        }
    }

    /* The normal form: "urn:" nid ":" NSS, percent-encodings in upper case, steps. */
    if (nss_len > STACK_NSS) {
        buf = PyMem_Malloc((size_t)nss_len);
        if (buf == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    memcpy(buf, nss_text, (size_t)nss_len);
    for (Py_ssize_t k = 0; k + 2 < nss_len; k++) {
        if (buf[k] == '%') {
            buf[k + 1] = (buf[k + 1] >= 'a' && buf[k + 1] <= 'f') ? buf[k + 1] - 32 : buf[k + 1];
            buf[k + 2] = (buf[k + 2] >= 'a' && buf[k + 2] <= 'f') ? buf[k + 2] - 32 : buf[k + 2];
            k += 2;
        }
    }
    Py_ssize_t norm_len = apply_steps(buf, nss_len, steps, nsteps);
    if (norm_len < 0)
        goto done;
    PyObject *normal = PyUnicode_New(4 + nid_len + 1 + norm_len, 127);
    if (normal == NULL)
        goto done;
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(normal);
    memcpy(out, "urn:", 4);
    memcpy(out + 4, key_buf, (size_t)nid_len);
    out[4 + nid_len] = ':';
    if (norm_len)
        memcpy(out + 5 + nid_len, buf, (size_t)norm_len);

    result = checked_type->tp_alloc(checked_type, 7);
    if (result == NULL) {
        Py_DECREF(normal);
        goto done;
    }
    PyObject *items[5] = {NULL, NULL, NULL, NULL, NULL};
    items[0] = ascii_string(t + 4, nid_len);
    items[1] = nss;
    Py_INCREF(nss);
    items[2] = r_start >= 0 ? ascii_string(t + r_start, r_end - r_start) : Py_NewRef(Py_None);
    items[3] = q_start >= 0 ? ascii_string(t + q_start, q_end - q_start) : Py_NewRef(Py_None);
    items[4] = f_start >= 0 ? ascii_string(t + f_start, n - f_start) : Py_NewRef(Py_None);
    for (int k = 0; k < 5; k++) {
        if (items[k] == NULL) {
            for (int m = 0; m < 5; m++)
                Py_XDECREF(items[m]);
            Py_DECREF(normal);
            Py_CLEAR(result);
            goto done;
        }
    }
    for (int k = 0; k < 5; k++)
        PyTuple_SET_ITEM(result, k, items[k]);
    PyTuple_SET_ITEM(result, 5, verdict);
    verdict = NULL; /* the result holds it now */
    PyTuple_SET_ITEM(result, 6, normal);

done:
    if (buf != stack)
        PyMem_Free(buf);
    Py_XDECREF(verdict);
    Py_XDECREF(nss);
    Py_XDECREF(machine);
    Py_DECREF(key);
    return result;
}

static PyObject *
configure(PyObject *module, PyObject *arg)
{
    if (!PyType_Check(arg) || !PyType_IsSubtype((PyTypeObject *)arg, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "configure(Checked): a tuple subclass");
        return NULL;
    }
    Py_INCREF(arg);
    Py_XSETREF(checked_type, (PyTypeObject *)arg);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"check", (PyCFunction)(void (*)(void))check, METH_FASTCALL,
     "check(text, profiles) -> Checked | None (None: take the Python path)"},
    {"configure", configure, METH_O, "configure(Checked): the result type"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "The URN check of urn8141.check in C (an accelerator; check_python is the "
    "reference).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    init_tables();
    machine_name = PyUnicode_InternFromString("_machine");
    if (machine_name == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
