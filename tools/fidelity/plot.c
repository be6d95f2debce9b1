/* gguf-fidelity --attribute --plot F.svg: where a quantization's error sits, per layer and tensor role. The upper
 * panel is a grid, one row per role (attn_q, ffn_down, ...) and one column per layer, each cell coloured by that
 * tensor's product error on the base's activations (log scale, white to red) and, where its restoration was
 * measured, outlined and labelled with the share of the KLD it recovers. The lower panel is the measured tensors'
 * KLD recovered, largest first. Plain SVG written here, so a browser shows it with nothing installed. */
#include "atomic.h"
#include "fidelity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEFT = 210, TOP = 64, BAR_H = 16, MAX_ROLES = 24, ROLE_LEN = 40 };

/* The grid's rows in the order a layer runs them; roles not listed follow in the order met. */
static const char *const role_order[] = {
    "token_embd", "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_gate_inp", "ffn_gate", "ffn_up",
    "ffn_gate_exps", "ffn_up_exps", "ffn_down", "ffn_down_exps", "output",
};

typedef struct plot {
    const char *quant;
    const fid_score *s;
    int n, n_layer;
    double kld;
    char roles[MAX_ROLES][ROLE_LEN];
    int n_roles;
    double lo, hi;  /* log10 of the product errors' range */
} plot;

/* A tensor's role as the grid names it: its name without "blk.N." and ".weight". */
static void role_name(const char *name, char *out, size_t cap)
{
    const char *p = name;
    if (!strncmp(p, "blk.", 4)) {
        const char *dot = strchr(p + 4, '.');
        p = dot ? dot + 1 : p;
    }
    snprintf(out, cap, "%s", p);
    char *w = strstr(out, ".weight");
    if (w && !w[7])
        *w = 0;
}

static int role_index(const plot *p, const char *role)
{
    for (int i = 0; i < p->n_roles; i++)
        if (!strcmp(p->roles[i], role))
            return i;
    return -1;
}

static int rank_of(const char *role)
{
    for (size_t i = 0; i < sizeof role_order / sizeof role_order[0]; i++)
        if (!strcmp(role_order[i], role))
            return (int)i;
    return (int)(sizeof role_order / sizeof role_order[0]);
}

static int by_rank(const void *a, const void *b)
{
    return rank_of(a) - rank_of(b);
}

/* Text from a file (tensor and file names) as SVG character data: markup escaped, controls and bytes past ASCII
 * shown as '?', so a hostile name neither breaks the document nor reaches a viewer raw. */
static void svg_text(FILE *fp, const char *s)
{
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '<')
            fputs("&lt;", fp);
        else if (c == '>')
            fputs("&gt;", fp);
        else if (c == '&')
            fputs("&amp;", fp);
        else if (c == '"')
            fputs("&quot;", fp);
        else
            fputc(c >= 0x20 && c < 0x7f ? c : '?', fp);
    }
}

/* White (the smallest error) to red (the largest), on a log scale. */
static void heat(const plot *p, double err, char *buf, size_t len)
{
    const double v = log10(err > 1e-30 ? err : 1e-30);
    double t = p->hi > p->lo ? (v - p->lo) / (p->hi - p->lo) : 1.0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    snprintf(buf, len, "rgb(255,%d,%d)", (int)(255 - 215 * t), (int)(255 - 225 * t));
}

static int by_recovered(const void *a, const void *b)
{
    const fid_score *x = *(const fid_score *const *)a, *y = *(const fid_score *const *)b;
    return (x->recovered < y->recovered) - (x->recovered > y->recovered);
}

static int write_svg(void *user, FILE *fp)
{
    const plot *p = user;
    const int cols = p->n_layer > 0 ? p->n_layer : 1;
    const int cell = cols > 60 ? 12 : cols > 30 ? 20 : 28, grid_w = cols * cell, grid_h = p->n_roles * cell;
    int n_measured = 0;
    const fid_score **measured = malloc((size_t)(p->n + 1) * sizeof *measured);
    if (!measured)
        return -1;
    for (int i = 0; i < p->n; i++)
        if (p->s[i].measured)
            measured[n_measured++] = &p->s[i];
    qsort(measured, (size_t)n_measured, sizeof *measured, by_recovered);
    const int bars_top = TOP + grid_h + 70, width = LEFT + (grid_w > 640 ? grid_w : 640) + 40;
    const int height = bars_top + n_measured * (BAR_H + 4) + 40;
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", width, height);
    const char *base = strrchr(p->quant, '/');
    fprintf(fp, "<text x=\"10\" y=\"22\" font-size=\"15\">");
    svg_text(fp, base ? base + 1 : p->quant);
    fprintf(fp, ": where its KLD of %.6f comes from</text>\n<text x=\"10\" y=\"42\" font-size=\"11\">each tensor's "
                "product error on the base's activations (log scale: white least, red most); outlined: measured, "
                "with the %% of the KLD it recovers</text>\n", p->kld);
    for (int r = 0; r < p->n_roles; r++) {
        fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 8, TOP + r * cell + cell / 2 + 4);
        svg_text(fp, p->roles[r]);
        fprintf(fp, "</text>\n");
    }
    for (int c = 0; c < cols; c++)
        if (cols <= 30 || c % 5 == 0)
            fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%d</text>\n",
                    LEFT + c * cell + cell / 2, TOP + grid_h + 14, c);
    fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">layer (tensors outside the layers span the row)"
                "</text>\n", LEFT + grid_w / 2, TOP + grid_h + 32);
    for (int i = 0; i < p->n; i++) {
        const fid_score *s = &p->s[i];
        char role[ROLE_LEN], fill[32];
        role_name(s->name, role, sizeof role);
        const int r = role_index(p, role);
        if (r < 0 || s->layer >= cols)
            continue;
        const int x = s->layer < 0 ? LEFT : LEFT + s->layer * cell, w = s->layer < 0 ? grid_w : cell;
        heat(p, s->err, fill, sizeof fill);
        fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\">"
                    "<title>", x, TOP + r * cell, w, cell, fill, s->measured ? "black" : "#ddd", s->measured ? 2 : 1);
        svg_text(fp, s->name);
        fprintf(fp, ": product error %.4g", s->err);
        if (s->measured)
            fprintf(fp, ", restored recovers %.6f of the KLD", s->recovered);
        fprintf(fp, "</title></rect>\n");
        if (s->measured && p->kld > 0 && cell >= 20)
            fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"9\">%.0f</text>\n", x + w / 2,
                    TOP + r * cell + cell / 2 + 3, 100 * s->recovered / p->kld);
    }
    fprintf(fp, "<text x=\"%d\" y=\"%d\" font-size=\"14\">KLD recovered by restoring each measured tensor to the "
                "base's weights</text>\n", 10, bars_top - 12);
    double top = 0;
    for (int i = 0; i < n_measured; i++)
        top = fmax(top, measured[i]->recovered);
    const int bar_w = width - LEFT - 120;
    for (int i = 0; i < n_measured; i++) {
        const int y = bars_top + i * (BAR_H + 4);
        const double v = measured[i]->recovered;
        const int w = top > 0 && v > 0 ? (int)(bar_w * v / top + 0.5) : 0;
        fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">", LEFT - 8, y + BAR_H - 4);
        svg_text(fp, measured[i]->name);
        fprintf(fp, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(200,60,50)\"/>\n"
                    "<text x=\"%d\" y=\"%d\" font-size=\"10\">%.6f (%.1f%%)</text>\n", LEFT, y, w, BAR_H,
                LEFT + w + 6, y + BAR_H - 4, v, p->kld > 0 ? 100 * v / p->kld : 0.0);
    }
    fprintf(fp, "</svg>\n");
    free(measured);
    return ferror(fp) ? -1 : 0;
}

int fid_write_plot(const char *path, const char *quant, const fid_score *s, int n, int n_layer, double kld, char *err,
                   size_t err_len)
{
    plot p = { .quant = quant, .s = s, .n = n, .n_layer = n_layer, .kld = kld, .lo = INFINITY, .hi = -INFINITY };
    for (int i = 0; i < n; i++) {
        char role[ROLE_LEN];
        role_name(s[i].name, role, sizeof role);
        if (role_index(&p, role) < 0 && p.n_roles < MAX_ROLES)
            snprintf(p.roles[p.n_roles++], ROLE_LEN, "%s", role);
        if (s[i].err > 0) {
            p.lo = fmin(p.lo, log10(s[i].err));
            p.hi = fmax(p.hi, log10(s[i].err));
        }
    }
    qsort(p.roles, (size_t)p.n_roles, sizeof p.roles[0], by_rank);
    return atomic_write(path, write_svg, &p, err, err_len);
}
