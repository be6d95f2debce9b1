/* The progress bar's arithmetic: the ETA from the rate so far, and the units it counts in. */
#include "progress.h"

#include <stdio.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

/* What the bar wrote to the redirected stderr. */
static void expect_stderr_has(const char *want)
{
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    char buf[1024] = { 0 };
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    cr_assert(strstr(buf, want), "the bar wrote '%s', expected it to hold '%s'", buf, want);
}

Test(progress, eta_from_the_rate_so_far)
{
    char buf[32];
    progress_eta(10.0, 50, 100, buf, sizeof buf);
    cr_assert_str_eq(buf, "ETA 10s");
    progress_eta(30.0, 1, 100, buf, sizeof buf);
    cr_assert_str_eq(buf, "ETA 49m30s");
    progress_eta(3600.0, 1, 10, buf, sizeof buf);
    cr_assert_str_eq(buf, "ETA 9h00m");
    progress_eta(0.1, 5, 100, buf, sizeof buf); /* too early for a rate */
    cr_assert_str_eq(buf, "");
    progress_eta(10.0, 100, 100, buf, sizeof buf); /* done */
    cr_assert_str_eq(buf, "");
    progress_eta(10.0, 0, 100, buf, sizeof buf);
    cr_assert_str_eq(buf, "");
}

Test(progress, counts_things_in_their_unit, .init = cr_redirect_stderr)
{
    progress p;
    progress_init_count(&p, "statistics", "tensors");
    p.enabled = true; /* as on a terminal */
    progress_update(&p, 10, 272);
    expect_stderr_has("\rstatistics [#                             ]   3%  10/272 tensors");
}

Test(progress, counts_bytes_as_sizes, .init = cr_redirect_stderr)
{
    progress p;
    progress_init(&p, "hashing");
    p.enabled = true;
    progress_update(&p, 512u << 20, 1024u << 20);
    expect_stderr_has("\rhashing [###############               ]  50%  512 MiB/1.00 GiB");
}
