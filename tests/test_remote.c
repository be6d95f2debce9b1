/*
 * Files read over HTTP by range requests, against a real nginx started on the loopback for each test (installed
 * by scripts/install-deps.sh; the tests skip, saying so, where it is not): gguf-inspect's listing, JSON and
 * --memory of a URL equal the local file's byte for byte having read about the header's bytes; gguf-verify of a
 * URL names a zeroed norm as the local verify does; and what servers do wrong is named with exit 1 or 2: 404,
 * 416, a server that ignores ranges, a redirect loop, an HTML page, a body cut short (a scripted socket server:
 * nginx does not cut its own bodies), a file replaced between requests. Credentials in a URL never reach output.
 */
#include "http.h"
#include "split_writer.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp_dir[64];
static pid_t nginx_pid;
static int port;
static char base[64];

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    cr_assert(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
              getsockname(s, (struct sockaddr *)&a, &len) == 0);
    close(s);
    return ntohs(a.sin_port);
}

static bool can_connect(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    bool ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

static const char *nginx_binary(void)
{
    static const char *const where[] = { "/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx" };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
        if (access(where[i], X_OK) == 0)
            return where[i];
    return NULL;
}

/* www/NAME -> the shared or real model NAME (nginx follows the link) */
static void serve(const char *name)
{
    char *src = model_path(name), dst[256];
    if (!src)
        return;
    snprintf(dst, sizeof dst, "%s/www/%s", tmp_dir, name);
    cr_assert_eq(symlink(src, dst), 0, "%s", strerror(errno));
    free(src);
}

static void start_nginx(void)
{
    cr_assert(tmp_dir_make(tmp_dir, "remote"));
    const char *bin = nginx_binary();
    if (!bin)
        return;
    char path[256];
    snprintf(path, sizeof path, "%s/www", tmp_dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    serve("tiny-llama-q4_0.gguf");
    serve("tiny-qwen3-q4_k_m.gguf");
    serve("gemma-3-270m-q4_k_m.gguf");
    port = free_port();
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    snprintf(path, sizeof path, "%s/nginx.conf", tmp_dir);
    FILE *fp = fopen(path, "w");
    cr_assert(fp);
    /* as root, nginx's workers would drop to nobody, who cannot read a 0700 temporary directory */
    fprintf(fp,
            "daemon off;\n%s"
            "pid %s/nginx.pid;\nerror_log %s/error.log;\nevents { worker_connections 32; }\n"
            "http {\n  access_log off;\n"
            "  client_body_temp_path %s/t1; proxy_temp_path %s/t2; fastcgi_temp_path %s/t3;\n"
            "  uwsgi_temp_path %s/t4; scgi_temp_path %s/t5;\n"
            "  server {\n    listen 127.0.0.1:%d;\n    root %s/www;\n"
            "    location /norange/ { alias %s/www/; max_ranges 0; }\n"
            "    location = /loop.gguf { return 302 /loop.gguf; }\n"
            "    location = /moved.gguf { return 301 /tiny-llama-q4_0.gguf; }\n"
            "    location = /gone.gguf { return 416; }\n"
            "    location = /page.gguf { default_type text/html; return 200 \"<!DOCTYPE html><html><head><title>"
            "Sign in</title></head><body>Access denied</body></html>\"; }\n"
            "  }\n}\n",
            geteuid() == 0 ? "user root;\n" : "", tmp_dir, tmp_dir, tmp_dir, tmp_dir, tmp_dir, tmp_dir, tmp_dir, port,
            tmp_dir, tmp_dir);
    fclose(fp);
    nginx_pid = fork();
    cr_assert(nginx_pid >= 0);
    if (nginx_pid == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execl(bin, bin, "-c", path, "-p", tmp_dir, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && !can_connect(); i++) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    cr_assert(can_connect(), "nginx did not start on port %d (see %s/error.log)", port, tmp_dir);
}

static void stop_nginx(void)
{
    if (nginx_pid > 0) {
        kill(nginx_pid, SIGQUIT);
        waitpid(nginx_pid, NULL, 0);
    }
    cr_assert(tmp_dir_remove(tmp_dir));
}

TestSuite(remote, .init = start_nginx, .fini = stop_nginx, .timeout = 120);

#define NEED_NGINX()                                                                                               \
    do {                                                                                                           \
        if (!nginx_pid)                                                                                            \
            cr_skip("nginx is not installed (scripts/install-deps.sh installs nginx-light): no HTTP server to test " \
                    "against");                                                                                    \
    } while (0)

/* every `from` in s (a malloc'd string) replaced by the shorter `to` */
static void replace_all(char *s, const char *from, const char *to)
{
    char *p;
    const size_t n = strlen(from), m = strlen(to);
    while ((p = strstr(s, from)) != NULL) {
        memmove(p + m, p + n, strlen(p + n) + 1);
        memcpy(p, to, m);
    }
}

/* the command's stdout, URL and path made the same, for comparison: the file as given is FILE, the server's root
 * and the folder it serves WWW */
static char *run_on(const char *tool, const char *file, const char *opts, int *st)
{
    char args[1024], www[128];
    snprintf(args, sizeof args, "'%s' %s 2>/dev/null", file, opts);
    char *out = run_tool(tool, args, st);
    replace_all(out, file, "FILE");
    snprintf(www, sizeof www, "%s/www", tmp_dir);
    replace_all(out, www, "WWW");
    replace_all(out, base, "WWW");
    return out;
}

/* "(N bytes, K requests)" of the tool's stderr */
static long bytes_read(const char *tool, const char *url, const char *opts)
{
    char args[1024];
    snprintf(args, sizeof args, "'%s' %s 2>&1 >/dev/null", url, opts);
    int st;
    char *err = run_tool(tool, args, &st);
    const char *p = strstr(err, "B (");
    long n = -1;
    if (p)
        sscanf(p, "B (%ld bytes", &n);
    free(err);
    return n;
}

Test(remote, inspect_and_memory_equal_the_local_file)
{
    NEED_NGINX();
    static const char *const names[] = { "tiny-llama-q4_0.gguf", "tiny-qwen3-q4_k_m.gguf", "gemma-3-270m-q4_k_m.gguf" };
    static const char *const opts[] = { "", "--json", "--memory -c 4096", "--memory --json --fit 1G",
                                        "--key general.architecture" };
    size_t compared = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char local[256], url[256];
        snprintf(local, sizeof local, "%s/www/%s", tmp_dir, names[i]);
        if (access(local, R_OK) != 0)
            continue;
        snprintf(url, sizeof url, "%s/%s", base, names[i]);
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            int s1, s2;
            char *a = run_on("gguf-inspect", local, opts[k], &s1), *b = run_on("gguf-inspect", url, opts[k], &s2);
            cr_expect_eq(s1, 0);
            cr_expect_eq(s2, 0, "%s %s", url, opts[k]);
            cr_expect_str_eq(b, a, "%s %s differs from the local file's", url, opts[k]);
            free(a), free(b);
            compared++;
        }
        /* the header, plus at most a quarter of it and one 64 KiB step */
        gguf_file *f = NULL;
        cr_assert_eq(gguf_open(local, &f, NULL), GGUF_OK);
        long header = (long)gguf_data_offset(f), got = bytes_read("gguf-inspect", url, "--memory");
        gguf_close(f);
        cr_expect(got >= header && got <= header + header / 4 + (64 << 10), "%s: read %ld bytes for a %ld-byte header",
                  names[i], got, header);
    }
    cr_assert_gt(compared, 0);
}

/* A zeroed norm's bytes (found through the header) in a copy served beside the original. */
static void zero_tensor_copy(const char *src_name, const char *dst_name, const char *tensor)
{
    char src[256], dst[256];
    snprintf(src, sizeof src, "%s/www/%s", tmp_dir, src_name);
    snprintf(dst, sizeof dst, "%s/www/%s", tmp_dir, dst_name);
    tbuf b = read_whole_file(src);
    cr_assert(b.p);
    gguf_file *f = NULL;
    cr_assert_eq(gguf_open(src, &f, NULL), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, tensor);
    cr_assert(t);
    memset(b.p + gguf_data_offset(f) + t->offset, 0, t->size);
    gguf_close(f);
    cr_assert(write_whole_file(dst, b.p, b.len));
    free(b.p);
}

Test(remote, verify_names_a_zeroed_norm_as_locally)
{
    NEED_NGINX();
    zero_tensor_copy("tiny-llama-q4_0.gguf", "bad.gguf", "blk.2.ffn_norm.weight");
    char local[256], url[256];
    snprintf(local, sizeof local, "%s/www/bad.gguf", tmp_dir);
    snprintf(url, sizeof url, "%s/bad.gguf", base);
    int s1, s2;
    char *a = run_on("gguf-verify", local, "", &s1), *b = run_on("gguf-verify", url, "", &s2);
    cr_expect_eq(s1, 1, "%s", a);
    cr_expect_eq(s2, 1, "%s", b);
    cr_expect(strstr(a, "blk.2.ffn_norm.weight  [zero-norm]"), "%s", a);
    cr_expect(strstr(b, "blk.2.ffn_norm.weight  [zero-norm]"), "%s", b);
    cr_expect(strstr(b, "not read, so not checked: 30 tensors' values"), "%s", b);
    free(a), free(b);
    /* the intact original passes remotely, and digests are refused rather than computed on bytes not read */
    snprintf(url, sizeof url, "%s/tiny-llama-q4_0.gguf", base);
    b = run_on("gguf-verify", url, "", &s2);
    cr_expect_eq(s2, 0, "%s", b);
    free(b);
    char args[512];
    snprintf(args, sizeof args, "'%s' --sha256 %064d 2>&1", url, 0);
    b = run_tool("gguf-verify", args, &s2);
    cr_expect(s2 == 2 && strstr(b, "download it"), "%s", b);
    free(b);
}

/* Each misbehaving server: the exit status and the words that name it. */
Test(remote, server_errors_are_named)
{
    NEED_NGINX();
    static const struct { const char *path; int status; const char *says; } cases[] = {
        { "/missing.gguf", 2, "HTTP 404 (not found)" },
        { "/gone.gguf", 2, "HTTP 416" },
        { "/norange/tiny-llama-q4_0.gguf", 2, "ignores range requests" },
        { "/loop.gguf", 2, "redirect loop" },
        { "/page.gguf", 1, "HTML page" },
        { "/moved.gguf", 0, "tiny-llama" }, /* a redirect is followed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "'%s%s' --metadata-only 2>&1", base, cases[i].path);
        int st;
        char *out = run_tool("gguf-inspect", args, &st);
        cr_expect_eq(st, cases[i].status, "%s: %s", cases[i].path, out);
        cr_expect(strstr(out, cases[i].says), "%s: %s", cases[i].path, out);
        free(out);
    }
    /* credentials in the URL (user:password, a token in the query) are never printed */
    char args[512];
    snprintf(args, sizeof args, "'http://user:s3cret@127.0.0.1:%d/missing.gguf?token=t0ken' 2>&1", port);
    int st;
    char *out = run_tool("gguf-inspect", args, &st);
    cr_expect_eq(st, 2);
    cr_expect(!strstr(out, "s3cret") && !strstr(out, "t0ken") && strstr(out, "/missing.gguf"), "%s", out);
    free(out);
}

/* The file replaced on the server between requests: nginx's ETag (mtime and size) changes and the next range
 * request says so. */
Test(remote, a_file_changed_between_requests_is_detected)
{
    NEED_NGINX();
    zero_tensor_copy("tiny-llama-q4_0.gguf", "moving.gguf", "blk.0.attn_norm.weight");
    char url[256], path[256];
    snprintf(url, sizeof url, "%s/moving.gguf", base);
    snprintf(path, sizeof path, "%s/www/moving.gguf", tmp_dir);
    http_file *h = NULL;
    gguf_io io;
    gguf_error e = { 0 };
    cr_assert_eq(http_open(url, &h, &io, &e), GGUF_OK, "%s", e.message);
    gguf_file *f = NULL;
    cr_assert_eq(gguf_open_io(&io, &f, &e), GGUF_OK, "%s", e.message);
    cr_expect_eq(gguf_tensors_absent(f), gguf_tensor_count(f), "no tensor read with the header of a 1.9 MB file");
    struct timespec old[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } }; /* another mtime: another ETag */
    cr_assert_eq(utimensat(AT_FDCWD, path, old, 0), 0);
    const gguf_tensor *t = gguf_tensor_by_name(f, "output_norm.weight");
    gguf_status s = gguf_io_fetch_tensor(f, (size_t)(t - gguf_tensor_at(f, 0)), &e);
    cr_expect_eq(s, GGUF_E_IO);
    cr_expect(strstr(e.message, "changed while it was read"), "%s", e.message);
    gguf_close(f);
    http_close(h);
}

/* A server that promises 64 KiB and closes after 1000 bytes. */
static int short_fd;
static void *short_server(void *arg)
{
    (void)arg;
    int c = accept(short_fd, NULL, NULL);
    if (c < 0)
        return NULL;
    char req[4096];
    ssize_t got = read(c, req, sizeof req);
    (void)got;
    static const char head[] = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-65535/1000000\r\n"
                               "Content-Length: 65536\r\nConnection: close\r\n\r\n";
    char body[1000] = "GGUF";
    ssize_t w = write(c, head, sizeof head - 1);
    w = write(c, body, sizeof body);
    (void)w;
    close(c);
    return NULL;
}

Test(remote, a_body_cut_short_is_named)
{
    short_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    cr_assert(bind(short_fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(short_fd, 1) == 0 &&
              getsockname(short_fd, (struct sockaddr *)&a, &len) == 0);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, short_server, NULL), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/model.gguf", ntohs(a.sin_port));
    http_file *h = NULL;
    gguf_io io;
    gguf_error e = { 0 };
    cr_expect_eq(http_open(url, &h, &io, &e), GGUF_E_IO);
    cr_expect(strstr(e.message, "cut short after 1000 bytes"), "%s", e.message);
    pthread_join(th, NULL);
    close(short_fd);
}

/* Two damaged tensors mended from the server: only their bytes are read besides the header, the copy is the
 * original byte for byte and matches the manifest, and the damaged file is left as it was. */
Test(remote, repair_reads_only_the_damaged_tensors)
{
    NEED_NGINX();
    char good[256], bad[256], manifest[256], fixed[256], url[256], args[2048];
    snprintf(good, sizeof good, "%s/www/tiny-llama-q4_0.gguf", tmp_dir);
    snprintf(bad, sizeof bad, "%s/damaged.gguf", tmp_dir);
    snprintf(manifest, sizeof manifest, "%s/good.manifest", tmp_dir);
    snprintf(fixed, sizeof fixed, "%s/damaged.repaired.gguf", tmp_dir);
    snprintf(url, sizeof url, "%s/tiny-llama-q4_0.gguf", base);
    int st;
    snprintf(args, sizeof args, "'%s' --write-manifest='%s' --no-audit >/dev/null 2>&1", good, manifest);
    free(run_tool("gguf-verify", args, &st));
    cr_assert_eq(st, 0);
    tbuf b = read_whole_file(good);
    cr_assert(b.p);
    gguf_file *f = NULL;
    cr_assert_eq(gguf_open(good, &f, NULL), GGUF_OK);
    const char *const damaged[] = { "blk.1.attn_q.weight", "blk.3.ffn_norm.weight" };
    uint64_t damaged_bytes = 0;
    for (int i = 0; i < 2; i++) {
        const gguf_tensor *t = gguf_tensor_by_name(f, damaged[i]);
        b.p[gguf_data_offset(f) + t->offset + 7] ^= 0x5a; /* one flipped byte each */
        damaged_bytes += t->size;
    }
    cr_assert(write_whole_file(bad, b.p, b.len));
    tbuf orig = read_whole_file(good);
    snprintf(args, sizeof args, "'%s' --manifest '%s' --repair-from '%s'", bad, manifest, url);
    char *out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 0, "%s", out);
    long tensor_bytes = -1;
    const char *line = strstr(out, "re-read from");
    cr_assert(line && strstr(line, ": ") && sscanf(strstr(line, ": ") + 2, "%ld bytes of tensors", &tensor_bytes) == 1,
              "%s", out);
    cr_expect_eq((uint64_t)tensor_bytes, damaged_bytes, "only the two tensors' bytes: %s", out);
    cr_expect(strstr(out, "2 tensors") && strstr(out, "it matches the manifest"), "%s", out);
    free(out);
    tbuf rep = read_whole_file(fixed);
    cr_expect(rep.len == orig.len && memcmp(rep.p, orig.p, orig.len) == 0, "the repaired copy is the original");
    tbuf still = read_whole_file(bad);
    cr_expect(still.len == b.len && memcmp(still.p, b.p, b.len) == 0, "the checked file is not written");
    /* the copy may not replace the file being checked */
    snprintf(args, sizeof args, "'%s' --manifest '%s' --repair-from '%s' --repair-to '%s' 2>&1", bad, manifest, url,
             bad);
    out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
    free(b.p), free(orig.p), free(rep.p), free(still.p);
    gguf_close(f);
}

/* A split model on the server (three shards in gguf-split's layout, of tiny-llama-q4_0): its first shard's URL reads as
 * the whole model, the shards' URLs made from it (a query string kept), with the local split's listing, memory and
 * verdict; a missing shard is named. */
Test(remote, a_split_model_reads_as_one)
{
    NEED_NGINX();
    char whole[256], prefix[256], local[300], url[300], why[600];
    snprintf(whole, sizeof whole, "%s/www/tiny-llama-q4_0.gguf", tmp_dir);
    if (access(whole, R_OK) != 0)
        cr_skip("tiny-llama-q4_0.gguf is not in the shared models");
    snprintf(prefix, sizeof prefix, "%s/www/part", tmp_dir);
    cr_assert(split_write(whole, prefix, 3, SPLIT_FAULT_NONE, -1, why, sizeof why), "%s", why);
    snprintf(local, sizeof local, "%s-00001-of-00003.gguf", prefix);
    snprintf(url, sizeof url, "%s/part-00001-of-00003.gguf", base);
    static const char *const opts[] = { "--metadata-only", "--memory -c 2048", "--json" };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        int s1, s2;
        char *a = run_on("gguf-inspect", local, opts[k], &s1), *b = run_on("gguf-inspect", url, opts[k], &s2);
        cr_expect(s1 == 0 && s2 == 0, "%s: %d %d", opts[k], s1, s2);
        cr_expect_str_eq(b, a, "%s", opts[k]);
        free(a), free(b);
    }
    char args[700];
    int st;
    snprintf(args, sizeof args, "'%s?download=true' --memory 2>&1 >/dev/null", url);
    char *out = run_tool("gguf-inspect", args, &st);
    cr_expect(st == 0 && strstr(out, "over 3 shards"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' 2>/dev/null", url);
    out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 0, "%s", out);
    free(out);
    char second[300];
    snprintf(second, sizeof second, "%s-00002-of-00003.gguf", prefix);
    cr_assert_eq(unlink(second), 0);
    snprintf(args, sizeof args, "'%s' --metadata-only 2>&1", url);
    out = run_tool("gguf-inspect", args, &st);
    cr_expect(st != 0 && strstr(out, "part-00002-of-00003.gguf") && strstr(out, "HTTP 404"), "%s", out);
    free(out);
}
