/* The shared shape of the tools' JSON documents (json_doc.h). */
#include "json_doc.h"
#include "args.h"
#include "json_line.h"

#include <stdio.h>
#include <string.h>

cJSON *json_doc_new(const char *tool, const char *file)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NULL;
    cJSON_AddStringToObject(doc, "tool", tool);
    cJSON_AddStringToObject(doc, "version", arg_version());
    json_add_text(doc, "file", file ? file : "");
    return doc;
}

cJSON *json_doc_verdict(cJSON *doc, int exit_status, const char *summary)
{
    static const char *const status[] = { "ok", "problem", "error" };
    cJSON_AddNumberToObject(doc, "exit_status", exit_status);
    cJSON *v = cJSON_AddObjectToObject(doc, "verdict");
    cJSON_AddStringToObject(v, "status", status[exit_status >= 0 && exit_status <= 2 ? exit_status : 2]);
    json_add_text(v, "summary", summary ? summary : "");
    return cJSON_AddArrayToObject(v, "findings");
}

void json_doc_finding(cJSON *findings, const char *severity, const char *code, const char *subject_kind,
                      const char *subject, const char *measured, const char *expected, const char *meaning)
{
    cJSON *x = cJSON_CreateObject();
    if (!x)
        return;
    cJSON_AddStringToObject(x, "severity", severity);
    json_add_text(x, "code", code);
    if (subject && subject[0])
        json_add_text(x, subject_kind, subject);
    json_add_text(x, "measured", measured ? measured : "");
    json_add_text(x, "expected", expected ? expected : "");
    json_add_text(x, "meaning", meaning ? meaning : "");
    cJSON_AddItemToArray(findings, x);
}

int json_doc_print_error(const char *tool, const char *file, int exit_status, const char *code, uint64_t offset,
                         const char *subject, const char *message)
{
    cJSON *doc = json_doc_new(tool, file);
    cJSON *findings = json_doc_verdict(doc, exit_status, message);
    bool tensor = subject && strstr(message, "tensor '") != NULL;
    json_doc_finding(findings, "error", code, tensor ? "tensor" : "key", subject, message,
                     exit_status == 1 ? "a well-formed file" : "a file that can be read",
                     exit_status == 1 ? "the file is malformed: nothing can use it as it is"
                                      : "the file could not be checked");
    if (offset)
        cJSON_AddNumberToObject(cJSON_GetArrayItem(findings, 0), "offset", (double)offset);
    json_print_line(stdout, doc);
    return exit_status;
}
