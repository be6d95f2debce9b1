/* Named float arrays as other engines dump them (tensor_dump.h): a numpy .npz (a zip of .npy members, stored or
 * deflated: numpy's savez and savez_compressed), a .safetensors file (an 8-byte little-endian header length, a
 * JSON header naming each tensor's dtype, shape and byte range, the data), or a folder of .npy files. */
#include "tensor_dump.h"
#include "atomic.h"
#include "read_file.h"

#include <cJSON.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

enum { MAX_DUMP_BYTES_LOG2 = 36 }; /* 64 GiB: any hidden-state dump a machine can hold */

static uint32_t u16le(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t u32le(const unsigned char *p) { return u16le(p) | u16le(p + 2) << 16; }
static uint64_t u64le(const unsigned char *p) { return (uint64_t)u32le(p) | (uint64_t)u32le(p + 4) << 32; }

void tensor_dump_free(tensor_dump *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->a[i].name);
        free(d->a[i].data);
    }
    free(d->a);
    memset(d, 0, sizeof *d);
}

static dump_array *add(tensor_dump *d, const char *name, size_t name_len, char *why, size_t why_len)
{
    dump_array *grown = realloc(d->a, (d->n + 1) * sizeof *grown);
    char *copy = malloc(name_len + 1);
    if (!grown || !copy) {
        if (grown)
            d->a = grown;
        free(copy);
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    d->a = grown;
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    for (size_t i = 0; i < name_len; i++) /* names are shown in messages: printable ASCII only */
        copy[i] = copy[i] >= 0x20 && copy[i] < 0x7f ? copy[i] : '?';
    dump_array *a = &d->a[d->n++];
    memset(a, 0, sizeof *a);
    a->name = copy;
    return a;
}

/* One .npy member's bytes as an array named name (its ".npy" dropped). */
static int add_npy(tensor_dump *d, const char *name, size_t name_len, const unsigned char *buf, size_t len, char *why,
                   size_t why_len)
{
    if (name_len > 4 && !memcmp(name + name_len - 4, ".npy", 4))
        name_len -= 4;
    dump_array *a = add(d, name, name_len, why, why_len);
    if (!a)
        return 2;
    a->data = npy_parse_floats(buf, len, a->name, a->shape, &a->ndim, why, why_len);
    a->rounding = npy_rounding(buf, len);
    return a->data ? 0 : 2;
}

static int read_npz(const char *path, const unsigned char *z, size_t len, tensor_dump *d, char *why, size_t why_len)
{
    /* the end of the central directory: its signature within the last 22 + 65535 bytes */
    size_t eocd = SIZE_MAX;
    for (size_t i = len >= 22 ? len - 22 : 0; len >= 22; i--) {
        if (u32le(z + i) == 0x06054b50u) {
            eocd = i;
            break;
        }
        if (i == 0 || len - i > 22 + 65535)
            break;
    }
    if (eocd == SIZE_MAX) {
        snprintf(why, why_len, "'%s' is not a zip archive (.npz): no end of central directory", path);
        return 2;
    }
    const uint32_t count = u16le(z + eocd + 10), cd_size = u32le(z + eocd + 12), cd_off = u32le(z + eocd + 16);
    if (cd_off == 0xffffffffu || count == 0xffffu) {
        snprintf(why, why_len, "'%s' is a zip64 archive (over 4 GiB): save the arrays as .npy files in a folder", path);
        return 2;
    }
    if ((uint64_t)cd_off + cd_size > eocd) {
        snprintf(why, why_len, "'%s': its central directory runs past its end", path);
        return 2;
    }
    size_t at = cd_off;
    for (uint32_t k = 0; k < count; k++) {
        if (at + 46 > eocd || u32le(z + at) != 0x02014b50u) {
            snprintf(why, why_len, "'%s': central directory entry %u is damaged", path, k);
            return 2;
        }
        const uint32_t method = u16le(z + at + 10), csize = u32le(z + at + 20), usize = u32le(z + at + 24),
                       nlen = u16le(z + at + 28), elen = u16le(z + at + 30), clen = u16le(z + at + 32),
                       local = u32le(z + at + 42);
        const char *name = (const char *)z + at + 46;
        if (at + 46 + nlen > eocd || (uint64_t)local + 30 > len || u32le(z + local) != 0x04034b50u) {
            snprintf(why, why_len, "'%s': member %u is damaged", path, k);
            return 2;
        }
        const uint64_t data = (uint64_t)local + 30 + u16le(z + local + 26) + u16le(z + local + 28);
        if (data + csize > len) {
            snprintf(why, why_len, "'%s': member %u runs past the end of the file", path, k);
            return 2;
        }
        at += 46 + (size_t)nlen + elen + clen;
        if (method == 0) {
            if (add_npy(d, name, nlen, z + data, csize, why, why_len))
                return 2;
            continue;
        }
        if (method != 8) {
            snprintf(why, why_len, "'%s': member %u is compressed by method %u (stored and deflate are read)", path, k,
                     method);
            return 2;
        }
        if ((uint64_t)usize > 1032 * (uint64_t)csize + 64) { /* deflate's largest ratio: no allocation on a claim */
            snprintf(why, why_len, "'%s': member %u claims %u bytes from %u compressed, more than deflate can give",
                     path, k, usize, csize);
            return 2;
        }
        unsigned char *out = malloc(usize ? usize : 1);
        z_stream s = { 0 };
        int zr = out ? inflateInit2(&s, -MAX_WBITS) : Z_MEM_ERROR;
        if (zr == Z_OK) {
            s.next_in = (unsigned char *)(z + data);
            s.avail_in = csize;
            s.next_out = out;
            s.avail_out = usize;
            zr = inflate(&s, Z_FINISH);
            inflateEnd(&s);
        }
        if (zr != Z_STREAM_END || s.total_out != usize) {
            free(out);
            snprintf(why, why_len, "'%s': member %u does not inflate to its %u bytes", path, k, usize);
            return 2;
        }
        const int r = add_npy(d, name, nlen, out, usize, why, why_len);
        free(out);
        if (r)
            return 2;
    }
    return 0;
}

static int read_safetensors(const char *path, const unsigned char *b, size_t len, tensor_dump *d, char *why,
                            size_t why_len)
{
    const uint64_t hlen = len >= 8 ? u64le(b) : 0;
    if (len < 8 || hlen > len - 8 || hlen > (1u << 26)) {
        snprintf(why, why_len, "'%s' is not a safetensors file: its header length runs past its end", path);
        return 2;
    }
    cJSON *h = cJSON_ParseWithLength((const char *)b + 8, (size_t)hlen);
    if (!cJSON_IsObject(h)) {
        cJSON_Delete(h);
        snprintf(why, why_len, "'%s': its safetensors header is not a JSON object", path);
        return 2;
    }
    const unsigned char *data = b + 8 + hlen;
    const size_t dlen = len - 8 - (size_t)hlen;
    int rc = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, h)
    {
        if (!strcmp(t->string, "__metadata__"))
            continue;
        const cJSON *dt = cJSON_GetObjectItem(t, "dtype"), *sh = cJSON_GetObjectItem(t, "shape"),
                    *off = cJSON_GetObjectItem(t, "data_offsets");
        static const struct {
            const char *name;
            size_t size;
        } types[] = { { "F16", 2 }, { "BF16", 2 }, { "F32", 4 }, { "F64", 8 } };
        size_t esize = 0, ti = 0;
        for (; cJSON_IsString(dt) && ti < sizeof types / sizeof types[0]; ti++)
            if (!strcmp(dt->valuestring, types[ti].name)) {
                esize = types[ti].size;
                break;
            }
        dump_array *a = add(d, t->string, strlen(t->string), why, why_len);
        if (!a) {
            rc = 2;
            break;
        }
        uint64_t total = 1;
        bool ok = esize && cJSON_IsArray(sh) && cJSON_GetArraySize(sh) >= 1 && cJSON_GetArraySize(sh) <= NPY_MAX_DIMS &&
                  cJSON_IsArray(off) && cJSON_GetArraySize(off) == 2;
        for (int k = 0; ok && k < cJSON_GetArraySize(sh); k++) {
            const double v = cJSON_GetArrayItem(sh, k)->valuedouble;
            ok = v >= 1 && v <= (double)(1ull << 34) && total <= (1ull << 34) / (uint64_t)v;
            a->shape[a->ndim++] = ok ? (uint64_t)v : 0;
            total *= ok ? (uint64_t)v : 1;
        }
        const double b0 = ok ? cJSON_GetArrayItem(off, 0)->valuedouble : -1,
                     b1 = ok ? cJSON_GetArrayItem(off, 1)->valuedouble : -1;
        ok = ok && b0 >= 0 && b1 >= b0 && b1 <= (double)dlen && (uint64_t)(b1 - b0) == total * esize;
        if (!ok) {
            snprintf(why, why_len, "'%s': tensor '%s' is not a float tensor (F16, BF16, F32, F64) whose shape and "
                     "byte range agree", path, a->name);
            rc = 2;
            break;
        }
        a->data = malloc(total * sizeof *a->data);
        if (!a->data) {
            snprintf(why, why_len, "out of memory");
            rc = 2;
            break;
        }
        a->rounding = esize == 2 ? (types[ti].name[0] == 'B' ? 0x1p-8f : 0x1p-11f) : 0.0f;
        const unsigned char *p = data + (uint64_t)b0;
        for (uint64_t i = 0; i < total; i++, p += esize) {
            if (esize == 4) {
                memcpy(&a->data[i], p, 4);
            } else if (esize == 8) {
                double v;
                memcpy(&v, p, 8);
                a->data[i] = (float)v;
            } else if (types[ti].name[0] == 'B') {
                const uint32_t bits = u16le(p) << 16;
                memcpy(&a->data[i], &bits, 4);
            } else {
                a->data[i] = npy_half_to_float((uint16_t)u16le(p));
            }
        }
    }
    cJSON_Delete(h);
    return rc;
}

static int read_folder(const char *path, tensor_dump *d, char *why, size_t why_len)
{
    DIR *dir = opendir(path);
    if (!dir) {
        snprintf(why, why_len, "cannot read the folder '%s'", path);
        return 2;
    }
    const struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(dir))) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".npy"))
            continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        size_t len;
        unsigned char *buf = read_file_bytes(file, (size_t)1 << MAX_DUMP_BYTES_LOG2, &len, why, why_len);
        rc = buf ? add_npy(d, e->d_name, n, buf, len, why, why_len) : 2;
        free(buf);
    }
    closedir(dir);
    if (!rc && d->n == 0) {
        snprintf(why, why_len, "the folder '%s' holds no .npy file", path);
        rc = 2;
    }
    return rc;
}

int tensor_dump_parse(const unsigned char *b, size_t len, const char *name, tensor_dump *d, char *why,
                      size_t why_len)
{
    memset(d, 0, sizeof *d);
    int rc;
    if (len >= 4 && u32le(b) == 0x04034b50u)
        rc = read_npz(name, b, len, d, why, why_len);
    else if (len >= 9 && b[8] == '{')
        rc = read_safetensors(name, b, len, d, why, why_len);
    else if (len >= 6 && !memcmp(b, "\x93NUMPY", 6))
        rc = add_npy(d, "0", 1, b, len, why, why_len);
    else {
        snprintf(why, why_len, "'%s' is neither an .npz, a .safetensors file, an .npy file nor a folder of them", name);
        rc = 2;
    }
    if (rc)
        tensor_dump_free(d);
    return rc;
}

int tensor_dump_read(const char *path, tensor_dump *d, char *why, size_t why_len)
{
    memset(d, 0, sizeof *d);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        const int rc = read_folder(path, d, why, why_len);
        if (rc)
            tensor_dump_free(d);
        return rc;
    }
    size_t len;
    unsigned char *b = read_file_bytes(path, (size_t)1 << MAX_DUMP_BYTES_LOG2, &len, why, why_len);
    if (!b)
        return 2;
    const int rc = tensor_dump_parse(b, len, path, d, why, why_len);
    free(b);
    return rc;
}

const dump_array *tensor_dump_find(const tensor_dump *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->a[i].name, name))
            return &d->a[i];
    return NULL;
}

/* ---- writing: .safetensors, or an .npz of stored .npy members --------------------------------------------- */

typedef struct writing {
    const dump_array *a;
    size_t n;
    bool npz;
} writing;

static void npy_header(const dump_array *a, char *h, size_t cap, size_t *len)
{
    int n = snprintf(h, cap, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (int d = 0; d < a->ndim; d++)
        n += snprintf(h + n, cap - (size_t)n, "%llu%s", (unsigned long long)a->shape[d],
                      a->ndim == 1 ? "," : d + 1 < a->ndim ? ", " : "");
    n += snprintf(h + n, cap - (size_t)n, "), }");
    const int padded = ((10 + n + 1 + 63) / 64) * 64 - 10; /* the data 64-byte aligned, as numpy writes it */
    while (n < padded - 1)
        h[n++] = ' ';
    h[n++] = '\n';
    *len = (size_t)n;
}

static uint64_t values_of(const dump_array *a)
{
    uint64_t n = 1;
    for (int d = 0; d < a->ndim; d++)
        n *= a->shape[d];
    return n;
}

static bool put16(FILE *fp, uint32_t v)
{
    return fputc((int)(v & 0xff), fp) != EOF && fputc((int)(v >> 8 & 0xff), fp) != EOF;
}
static bool put32(FILE *fp, uint32_t v) { return put16(fp, v & 0xffff) && put16(fp, v >> 16); }

static int write_npz(FILE *fp, const writing *w)
{
    uint32_t *crc = calloc(w->n + 1, sizeof *crc), *offs = calloc(w->n + 1, sizeof *offs);
    uint32_t *sizes = calloc(w->n + 1, sizeof *sizes);
    bool ok = crc && offs && sizes;
    uint64_t at = 0;
    for (size_t i = 0; ok && i < w->n; i++) {
        char h[512];
        size_t hl;
        npy_header(&w->a[i], h, sizeof h, &hl);
        const unsigned char magic[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff),
                                          (unsigned char)(hl >> 8) };
        const uint64_t bytes = 10 + hl + values_of(&w->a[i]) * 4;
        const size_t nl = strlen(w->a[i].name) + 4;
        ok = at + 30 + nl + bytes < 0xffffffffu; /* no zip64 */
        uLong c = crc32(0L, magic, 10);
        c = crc32(c, (const unsigned char *)h, (uInt)hl);
        const unsigned char *p = (const unsigned char *)w->a[i].data;
        for (uint64_t left = values_of(&w->a[i]) * 4; ok && left;) {
            const uInt step = left > (1u << 30) ? (1u << 30) : (uInt)left;
            c = crc32(c, p, step);
            p += step, left -= step;
        }
        crc[i] = (uint32_t)c, offs[i] = (uint32_t)at, sizes[i] = (uint32_t)bytes;
        ok = ok && put32(fp, 0x04034b50u) && put16(fp, 20) && put16(fp, 0) && put16(fp, 0) && put32(fp, 0) &&
             put32(fp, crc[i]) && put32(fp, sizes[i]) && put32(fp, sizes[i]) && put16(fp, (uint32_t)nl) &&
             put16(fp, 0) && fprintf(fp, "%s.npy", w->a[i].name) == (int)nl && fwrite(magic, 1, 10, fp) == 10 &&
             fwrite(h, 1, hl, fp) == hl && fwrite(w->a[i].data, 4, values_of(&w->a[i]), fp) == values_of(&w->a[i]);
        at += 30 + nl + bytes;
    }
    const uint64_t cd = at;
    for (size_t i = 0; ok && i < w->n; i++) {
        const size_t nl = strlen(w->a[i].name) + 4;
        ok = put32(fp, 0x02014b50u) && put16(fp, 20) && put16(fp, 20) && put16(fp, 0) && put16(fp, 0) &&
             put32(fp, 0) && put32(fp, crc[i]) && put32(fp, sizes[i]) && put32(fp, sizes[i]) &&
             put16(fp, (uint32_t)nl) && put16(fp, 0) && put16(fp, 0) && put16(fp, 0) && put16(fp, 0) &&
             put32(fp, 0) && put32(fp, offs[i]) && fprintf(fp, "%s.npy", w->a[i].name) == (int)nl;
        at += 46 + nl;
    }
    ok = ok && at < 0xffffffffu && put32(fp, 0x06054b50u) && put16(fp, 0) && put16(fp, 0) &&
         put16(fp, (uint32_t)w->n) && put16(fp, (uint32_t)w->n) && put32(fp, (uint32_t)(at - cd)) &&
         put32(fp, (uint32_t)cd) && put16(fp, 0);
    free(crc), free(offs), free(sizes);
    return ok ? 0 : -1;
}

static int write_safetensors(FILE *fp, const writing *w)
{
    cJSON *h = cJSON_CreateObject();
    uint64_t at = 0;
    for (size_t i = 0; h && i < w->n; i++) {
        cJSON *t = cJSON_AddObjectToObject(h, w->a[i].name), *sh = t ? cJSON_AddArrayToObject(t, "shape") : NULL;
        cJSON *off = t ? cJSON_AddArrayToObject(t, "data_offsets") : NULL;
        if (!sh || !off || !cJSON_AddStringToObject(t, "dtype", "F32"))
            break;
        for (int d = 0; d < w->a[i].ndim; d++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)w->a[i].shape[d]));
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)at));
        at += values_of(&w->a[i]) * 4;
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)at));
    }
    char *text = h ? cJSON_PrintUnformatted(h) : NULL;
    cJSON_Delete(h);
    if (!text)
        return -1;
    size_t hl = strlen(text);
    const size_t padded = (hl + 7) / 8 * 8; /* the data 8-byte aligned, padded with spaces as the format allows */
    unsigned char len8[8];
    for (int k = 0; k < 8; k++)
        len8[k] = (unsigned char)((uint64_t)padded >> (8 * k));
    bool ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(text, 1, hl, fp) == hl;
    for (; ok && hl < padded; hl++)
        ok = fputc(' ', fp) != EOF;
    free(text);
    for (size_t i = 0; ok && i < w->n; i++)
        ok = fwrite(w->a[i].data, 4, values_of(&w->a[i]), fp) == values_of(&w->a[i]);
    return ok ? 0 : -1;
}

static int write_body(void *user, FILE *fp)
{
    const writing *w = user;
    return w->npz ? write_npz(fp, w) : write_safetensors(fp, w);
}

int tensor_dump_write(const char *path, const dump_array *a, size_t n, char *why, size_t why_len)
{
    const size_t len = strlen(path);
    const bool npz = len > 4 && !strcmp(path + len - 4, ".npz"),
               st = len > 12 && !strcmp(path + len - 12, ".safetensors");
    if (!npz && !st) {
        snprintf(why, why_len, "'%s': the file name says the format: .npz or .safetensors", path);
        return 2;
    }
    writing w = { a, n, npz };
    return atomic_write(path, write_body, &w, why, why_len) ? 2 : 0;
}
