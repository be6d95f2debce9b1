/* A tool's answer to a file that shrinks while it is read: a message and exit 2, never a signal. */
#ifndef GGUFSCOPE_TOOLS_SIGBUS_H
#define GGUFSCOPE_TOOLS_SIGBUS_H

/* Installs a SIGBUS handler that names the file and byte (gguf_mapping_lookup), says the file changed
 * while being read, and exits 2 ("trouble": the file on disk is no longer the one that was checked). */
void sigbus_guard_install(const char *prog);

#endif
