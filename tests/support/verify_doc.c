#include "verify_doc.h"

#include "suite_helpers.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *verify_json(const char *path, const char *extra, int *status)
{
    char args[1024];
    snprintf(args, sizeof args, "'%s' --json %s", path, extra ? extra : "");
    char *out = run_tool("gguf-verify", args, status);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "gguf-verify --json printed no JSON:\n%s", out);
    free(out);
    return doc;
}

cJSON *findings_of(const cJSON *doc)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "verdict"), "findings");
}

int count_findings(const cJSON *doc, const char *severity)
{
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, findings_of(doc))
        n += strcmp(cJSON_GetObjectItem(f, "severity")->valuestring, severity) == 0;
    return n;
}

const cJSON *find_finding(const cJSON *doc, const char *code, const char *tensor)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, findings_of(doc))
    {
        if (code && strcmp(cJSON_GetObjectItem(f, "code")->valuestring, code) != 0)
            continue;
        if (tensor && strcmp(cJSON_GetObjectItem(f, "tensor")->valuestring, tensor) != 0)
            continue;
        return f;
    }
    return NULL;
}

char *findings_text(const cJSON *doc)
{
    return cJSON_Print(findings_of(doc));
}

void write_patched(const char *model, const char *tensor, patch_fn patch, const char *out)
{
    char *src = need_model(model);
    tbuf b = read_whole_file(src);
    cr_assert(b.len > 0);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, NULL), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, tensor);
    cr_assert(t, "%s has no tensor %s", model, tensor);
    patch(b.p + (t->data - b.p), t);
    cr_assert(write_whole_file(out, b.p, b.len));
    gguf_close(f);
    tbuf_free(&b);
    free(src);
}
