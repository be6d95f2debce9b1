/* --plot F.svg: the residual's RMS after every layer across the prompt positions, one line per layer (log
 * scale), ours solid and theirs (--against) dashed, the first departure ringed. Plain SVG written here, so a
 * browser shows it with nothing installed. */
#include "atomic.h"
#include "json_line.h"
#include "run.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 900, H = 520, LEFT = 70, RIGHT = 150, TOP = 40, BOTTOM = 50 };

/* One side's RMS after layer il (n_layer: the final norm) at a position; NAN where it has none. */
typedef double (*rms_fn)(const void *user, int il, int pos);

typedef struct plot {
    rms_fn ours, theirs;   /* theirs NULL: one side */
    const void *ours_user, *theirs_user;
    const char *legend;    /* "ours solid, theirs dashed" */
    const char *x_label;
    int mark_layer, mark_pos; /* the first departure, or -1 */
    FILE *fp;
    double lo, hi;         /* log10 RMS range */
    int n_pos, n_layer;    /* n_layer + 1 lines: the layers and the final norm */
} plot;

static double x_of(const plot *p, int pos)
{
    return LEFT + (p->n_pos > 1 ? (double)pos / (p->n_pos - 1) : 0.5) * (W - LEFT - RIGHT);
}

static double y_of(const plot *p, double rms)
{
    double v = log10(rms > 1e-30 ? rms : 1e-30);
    return TOP + (p->hi - v) / (p->hi - p->lo) * (H - TOP - BOTTOM);
}

/* A layer's colour, from blue (first) to red (last). */
static void colour(int il, int n, char *buf, size_t len)
{
    double t = n > 1 ? (double)il / (n - 1) : 0.0;
    snprintf(buf, len, "rgb(%d,%d,%d)", (int)(40 + 200 * t), 60, (int)(220 - 180 * t));
}

/* ---- the sources: our trace, their prompt_trace (JSON), a comparison's two sides ---- */

static double trace_rms(const void *user, int il, int pos)
{
    const kern_row_stats *s = engine_trace_at(user, il, pos);
    return s ? s->rms : NAN;
}

typedef struct json_trace {
    const cJSON *layers;
    int n_layer;
} json_trace;

static double json_rms(const void *user, int il, int pos)
{
    const json_trace *j = user;
    const cJSON *L;
    cJSON_ArrayForEach(L, j->layers)
    {
        const cJSON *id = cJSON_GetObjectItem(L, "layer");
        if ((cJSON_IsNumber(id) && id->valueint == il && il < j->n_layer) ||
            (cJSON_IsString(id) && il == j->n_layer && !strcmp(id->valuestring, "result_norm"))) {
            const cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(L, "rms"), pos);
            return cJSON_IsNumber(x) ? x->valuedouble : NAN;
        }
    }
    return NAN;
}

typedef struct cmp_side {
    const engine_comparison *c;
    int side;
} cmp_side;

static double cmp_rms(const void *user, int il, int pos)
{
    const cmp_side *s = user;
    return s->c->rms[s->side] ? s->c->rms[s->side][(size_t)il * (size_t)s->c->rms_stride + (size_t)pos] : NAN;
}

static void range(plot *p)
{
    p->lo = INFINITY, p->hi = -INFINITY;
    for (int il = 0; il <= p->n_layer; il++)
        for (int pos = 0; pos < p->n_pos; pos++) {
            double v[2] = { p->ours(p->ours_user, il, pos), p->theirs ? p->theirs(p->theirs_user, il, pos) : NAN };
            for (int k = 0; k < 2; k++)
                if (isfinite(v[k]) && v[k] > 0) {
                    p->lo = fmin(p->lo, log10(v[k]));
                    p->hi = fmax(p->hi, log10(v[k]));
                }
        }
    if (!isfinite(p->lo))
        p->lo = -1, p->hi = 1;
    if (p->hi - p->lo < 0.5)
        p->lo -= 0.25, p->hi += 0.25;
}

static void line(const plot *p, int il, bool theirs, const char *col)
{
    fprintf(p->fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", col,
            theirs ? "1.2" : "1.6", theirs ? " stroke-dasharray=\"5,3\"" : "");
    for (int pos = 0; pos < p->n_pos; pos++) {
        double v = theirs ? p->theirs(p->theirs_user, il, pos) : p->ours(p->ours_user, il, pos);
        if (isfinite(v) && v > 0)
            fprintf(p->fp, "%.1f,%.1f ", x_of(p, pos), y_of(p, v));
    }
    fprintf(p->fp, "\"/>\n");
}

static int write_svg(void *user, FILE *fp)
{
    plot *p = user;
    p->fp = fp;
    fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H, W, H);
    fprintf(fp, "<text x=\"%d\" y=\"22\" font-size=\"14\">residual RMS after each layer, per position%s%s%s</text>\n",
            LEFT, p->legend ? " (" : "", p->legend ? p->legend : "", p->legend ? ")" : "");
    /* axes: log10 ticks on y, positions on x */
    fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", LEFT, TOP, LEFT, H - BOTTOM);
    fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", LEFT, H - BOTTOM, W - RIGHT,
            H - BOTTOM);
    for (int e = (int)floor(p->lo); e <= (int)ceil(p->hi); e++) {
        double y = TOP + (p->hi - e) / (p->hi - p->lo) * (H - TOP - BOTTOM);
        if (y < TOP - 1 || y > H - BOTTOM + 1)
            continue;
        fprintf(fp, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n",
                LEFT, y, W - RIGHT, y, LEFT - 6, y + 4, e);
    }
    int step = p->n_pos > 20 ? p->n_pos / 10 : 1;
    for (int pos = 0; pos < p->n_pos; pos += step)
        fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x_of(p, pos), H - BOTTOM + 16,
                pos);
    fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", (LEFT + W - RIGHT) / 2, H - 12,
            p->x_label);
    for (int il = 0; il <= p->n_layer; il++) {
        char col[32];
        colour(il, p->n_layer + 1, col, sizeof col);
        if (il == p->n_layer)
            fprintf(fp, "<g><title>final norm</title>\n");
        else
            fprintf(fp, "<g><title>layer %d</title>\n", il);
        line(p, il, false, col);
        if (p->theirs)
            line(p, il, true, col);
        fprintf(fp, "</g>\n");
        int row = il * (H - TOP - BOTTOM) / (p->n_layer + 1 > 24 ? p->n_layer + 1 : 24);
        char label[32];
        if (il == p->n_layer)
            snprintf(label, sizeof label, "final norm");
        else
            snprintf(label, sizeof label, "layer %d", il);
        if (p->n_layer < 48 || il % 4 == 0 || il == p->n_layer)
            fprintf(fp, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", W - RIGHT + 10, TOP + row + 10, col, label);
    }
    if (p->mark_layer >= 0 && p->mark_pos >= 0 && p->mark_pos < p->n_pos) {
        double v = p->ours(p->ours_user, p->mark_layer, p->mark_pos);
        if (isfinite(v) && v > 0)
            fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"none\" stroke=\"black\" stroke-width=\"2\">"
                        "<title>first departure: %s %d, position %d</title></circle>\n"
                        "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">first departure</text>\n",
                    x_of(p, p->mark_pos), y_of(p, v), p->mark_layer == p->n_layer ? "final norm" : "layer",
                    p->mark_layer, p->mark_pos, x_of(p, p->mark_pos) + 10, y_of(p, v) - 10);
    }
    fprintf(fp, "</svg>\n");
    return ferror(fp) ? -1 : 0;
}

int run_write_plot(const char *path, const run_result *r, const cJSON *theirs_trace, int mark_layer, int mark_pos,
                   char *err, size_t err_len)
{
    json_trace j = { theirs_trace, engine_trace_layers(r->trace) - 1 };
    plot p = { .ours = trace_rms, .ours_user = r->trace, .theirs = theirs_trace ? json_rms : NULL, .theirs_user = &j,
               .legend = theirs_trace ? "ours solid, theirs dashed" : NULL, .x_label = "prompt position",
               .mark_layer = mark_layer, .mark_pos = mark_pos, .n_pos = (int)r->n_prompt, .n_layer = j.n_layer };
    range(&p);
    return atomic_write(path, write_svg, &p, err, err_len);
}

int run_write_compare_plot(const char *path, const engine_comparison *c, const char *legend, char *err,
                           size_t err_len)
{
    cmp_side a = { c, 0 }, b = { c, 1 };
    const engine_cmp_point *first = c->first_bad >= 0 ? &c->points[c->first_bad] : NULL;
    plot p = { .ours = cmp_rms, .ours_user = &a, .theirs = cmp_rms, .theirs_user = &b, .legend = legend,
               .x_label = "position (the prompt, then the decode steps)",
               .mark_layer = first ? first->layer : -1, .mark_pos = first ? first->first_pos : -1,
               .n_pos = c->n_prompt + c->n_decode, .n_layer = c->n_layer };
    range(&p);
    return atomic_write(path, write_svg, &p, err, err_len);
}
