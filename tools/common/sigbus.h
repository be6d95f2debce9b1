/* A tool's answer to a file that shrinks while it is read: a message and exit 2, never a signal. */
#ifndef GGUFSCOPE_TOOLS_SIGBUS_H
#define GGUFSCOPE_TOOLS_SIGBUS_H

/* Installs a SIGBUS handler that names the file and byte (gguf_mapping_lookup), says the file changed
 * while being read, and exits 2 ("trouble": the file on disk is no longer the one that was checked). */
void sigbus_guard_install(const char *prog);
/* With --json, the answer is also an error document on stdout (docs/JSON.md's shape, exit_status 2) on a line
 * of its own, for the file now being read (called again for each file). */
void sigbus_guard_json(const char *file);

#endif
