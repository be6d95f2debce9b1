/* The one shape every tool's --json document has (docs/JSON.md):
 *   {"tool": "gguf-verify", "version": "0.1.0", "file": PATH, "exit_status": 0|1|2,
 *    "verdict": {"status": "ok"|"problem"|"error", "summary": TEXT,
 *                "findings": [{"severity", "code", "tensor"|"key", "measured", "expected", "meaning"}...]},
 *    ...the tool's own fields}
 * "problem" is exit 1 (the file, or what was compared, is wrong), "error" is exit 2 (it could not be checked). */
#ifndef GGUFSCOPE_TOOLS_JSON_DOC_H
#define GGUFSCOPE_TOOLS_JSON_DOC_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* A document with tool, version and file set. */
cJSON *json_doc_new(const char *tool, const char *file);
/* Sets exit_status and the verdict (status from the exit status); returns its findings array. */
cJSON *json_doc_verdict(cJSON *doc, int exit_status, const char *summary);
/* One finding; subject_kind is "tensor" or "key" (subject NULL or "": none), any text may be NULL. */
void json_doc_finding(cJSON *findings, const char *severity, const char *code, const char *subject_kind,
                      const char *subject, const char *measured, const char *expected, const char *meaning);
/* For --json when the file cannot be used at all: a whole document on stdout whose verdict holds one
 * finding (code, the byte offset and subject when known, the message). Returns exit_status. */
int json_doc_print_error(const char *tool, const char *file, int exit_status, const char *code, uint64_t offset,
                         const char *subject, const char *message);

#endif
