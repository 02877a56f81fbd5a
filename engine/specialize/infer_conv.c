/* Shape rules for the spatial ops: convolutions, pools and resampling.
 * Options and defaults are WebNN's: padding [beginH, endH, beginW, endW],
 * strides and dilations [h, w], layouts as strings. */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "infer.h"

typedef struct spatial {
    int64_t pad[4], stride[2], dil[2];
} spatial;

static int read_ints(sp_ctx *c, const char *key, int64_t *out, int want, int64_t def, int64_t min) {
    int n;
    if (sp_opt_ints(c, key, out, (size_t)want, &n)) return -1;
    if (n < 0) {
        for (int i = 0; i < want; i++) out[i] = def;
        return 0;
    }
    if (n != want) return sp_fail(c, "option '%s' expected %d items, found %d", key, want, n);
    for (int i = 0; i < want; i++)
        if (out[i] < min)
            return sp_fail(c, "option '%s' expected items >= %lld, found %lld", key,
                           (long long)min, (long long)out[i]);
    return 0;
}

static int read_spatial(sp_ctx *c, spatial *s) {
    return read_ints(c, "padding", s->pad, 4, 0, 0) || read_ints(c, "strides", s->stride, 2, 1, 1) ||
           read_ints(c, "dilations", s->dil, 2, 1, 1);
}

static int want_rank4(sp_ctx *c, uint32_t i) {
    sp_val *v = sp_in(c, i);
    if (v->rank == 4) return 0;
    char sb[160];
    return sp_fail(c, "operand %u '%s' expected rank 4, found %s", i, sp_in_name(c, i),
                   sp_shape_str(sb, sizeof sb, v));
}

/* Input layout: *nhwc = 1 for "nhwc". */
static int read_layout(sp_ctx *c, const char *key, int *nhwc) {
    const char *s;
    if (sp_opt_str(c, key, "nchw", &s)) return -1;
    if (!strcmp(s, "nchw")) *nhwc = 0;
    else if (!strcmp(s, "nhwc")) *nhwc = 1;
    else return sp_fail(c, "option '%s' expected \"nchw\" or \"nhwc\", found \"%s\"", key, s);
    return 0;
}

/* Picks dims out of a 4-D filter by its layout letters ('o', 'i', 'h', 'w'). */
static int64_t by_letter(const char *layout, const int64_t *dims, char letter) {
    for (int i = 0; i < 4; i++)
        if (layout[i] == letter) return dims[i];
    return -1;
}

static int read_filter_layout(sp_ctx *c, const char *def, const char *const *allowed,
                              const char **out) {
    if (sp_opt_str(c, "filterLayout", def, out)) return -1;
    for (int i = 0; allowed[i]; i++)
        if (!strcmp(*out, allowed[i])) return 0;
    return sp_fail(c, "option 'filterLayout' expected one of %s, %s, %s%s%s, found \"%s\"",
                   allowed[0], allowed[1], allowed[2], allowed[3] ? ", " : "",
                   allowed[3] ? allowed[3] : "", *out);
}

static int out_dims(sp_ctx *c, const sp_val *x, int nhwc, int64_t ch, const int64_t *hw) {
    int64_t d[4] = {x->dims[0], ch, hw[0], hw[1]};
    if (nhwc) {
        d[1] = hw[0];
        d[2] = hw[1];
        d[3] = ch;
    }
    return sp_set_out(c, 0, x->dtype, 4, d);
}

static int check_bias(sp_ctx *c, const sp_val *x, int64_t ch) {
    sp_val *b;
    const char *name;
    if (sp_opt_operand(c, "bias", &b, &name)) return -1;
    if (b && (b->dtype != x->dtype || b->rank != 1 || b->dims[0] != ch)) {
        char sb[160];
        return sp_fail(c, "option 'bias' '%s' expected %s[%lld], found %s", name,
                       berth_dtype_name(x->dtype), (long long)ch, sp_shape_str(sb, sizeof sb, b));
    }
    return 0;
}

static int conv2d(sp_ctx *c) {
    static const char *const layouts[] = {"oihw", "hwio", "ohwi", "ihwo", NULL};
    if (want_rank4(c, 0) || want_rank4(c, 1)) return -1;
    sp_val *x = sp_in(c, 0), *f = sp_in(c, 1);
    spatial s;
    int nhwc;
    int64_t groups;
    const char *fl;
    char sa[160], sb[160];
    if (read_spatial(c, &s) || read_layout(c, "inputLayout", &nhwc) ||
        sp_opt_int(c, "groups", 1, &groups) || read_filter_layout(c, "oihw", layouts, &fl))
        return -1;
    if (f->dtype != x->dtype)
        return sp_fail(c, "operand 1 '%s' expected %s to match operand 0 '%s', found %s",
                       sp_in_name(c, 1), berth_dtype_name(x->dtype), sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, f));
    int64_t ch = nhwc ? x->dims[3] : x->dims[1];
    int64_t in_hw[2] = {nhwc ? x->dims[1] : x->dims[2], nhwc ? x->dims[2] : x->dims[3]};
    int64_t o = by_letter(fl, f->dims, 'o'), fi = by_letter(fl, f->dims, 'i');
    int64_t k[2] = {by_letter(fl, f->dims, 'h'), by_letter(fl, f->dims, 'w')};
    if (groups < 1 || o % groups != 0)
        return sp_fail(c, "option 'groups' expected >= 1 and dividing %lld output channels, found %lld",
                       (long long)o, (long long)groups);
    if (fi * groups != ch)
        return sp_fail(c, "operand 1 '%s' expected %lld input channels (%s, groups %lld) to match operand 0 '%s' %s, found %s",
                       sp_in_name(c, 1), (long long)(groups ? ch / groups : 0), fl,
                       (long long)groups, sp_in_name(c, 0), sp_shape_str(sa, sizeof sa, x),
                       sp_shape_str(sb, sizeof sb, f));
    int64_t hw[2];
    for (int i = 0; i < 2; i++) {
        int64_t span = in_hw[i] + s.pad[2 * i] + s.pad[2 * i + 1];
        int64_t win = (k[i] - 1) * s.dil[i] + 1;
        if (k[i] < 1 || span < win)
            return sp_fail(c, "operand 1 '%s' expected a window of at most %lld (padded input %s), found %lld",
                           sp_in_name(c, 1), (long long)span, sp_shape_str(sa, sizeof sa, x),
                           (long long)win);
        hw[i] = (span - win) / s.stride[i] + 1;
    }
    if (check_bias(c, x, o)) return -1;
    return out_dims(c, x, nhwc, o, hw);
}

static int conv_transpose2d(sp_ctx *c) {
    static const char *const layouts[] = {"iohw", "hwoi", "ohwi", NULL, NULL};
    if (want_rank4(c, 0) || want_rank4(c, 1)) return -1;
    sp_val *x = sp_in(c, 0), *f = sp_in(c, 1);
    spatial s;
    int nhwc;
    int64_t groups, opad[2], sizes[2];
    int n_sizes;
    const char *fl;
    char sa[160], sb[160];
    if (read_spatial(c, &s) || read_layout(c, "inputLayout", &nhwc) ||
        sp_opt_int(c, "groups", 1, &groups) || read_filter_layout(c, "iohw", layouts, &fl) ||
        read_ints(c, "outputPadding", opad, 2, 0, 0) ||
        sp_opt_ints(c, "outputSizes", sizes, 2, &n_sizes))
        return -1;
    if (f->dtype != x->dtype)
        return sp_fail(c, "operand 1 '%s' expected %s to match operand 0 '%s', found %s",
                       sp_in_name(c, 1), berth_dtype_name(x->dtype), sp_in_name(c, 0),
                       sp_shape_str(sb, sizeof sb, f));
    int64_t ch = nhwc ? x->dims[3] : x->dims[1];
    int64_t in_hw[2] = {nhwc ? x->dims[1] : x->dims[2], nhwc ? x->dims[2] : x->dims[3]};
    int64_t fi = by_letter(fl, f->dims, 'i'), og = by_letter(fl, f->dims, 'o');
    int64_t k[2] = {by_letter(fl, f->dims, 'h'), by_letter(fl, f->dims, 'w')};
    if (groups < 1) return sp_fail(c, "option 'groups' expected >= 1, found %lld", (long long)groups);
    if (fi != ch)
        return sp_fail(c, "operand 1 '%s' expected %lld input channels (%s) to match operand 0 '%s' %s, found %s",
                       sp_in_name(c, 1), (long long)ch, fl, sp_in_name(c, 0),
                       sp_shape_str(sa, sizeof sa, x), sp_shape_str(sb, sizeof sb, f));
    if (n_sizes >= 0 && n_sizes != 2)
        return sp_fail(c, "option 'outputSizes' expected 2 items, found %d", n_sizes);
    int64_t hw[2];
    for (int i = 0; i < 2; i++) {
        if (opad[i] >= s.stride[i] && opad[i] >= s.dil[i])
            return sp_fail(c, "option 'outputPadding' expected items < stride %lld, found %lld",
                           (long long)s.stride[i], (long long)opad[i]);
        int64_t base = (in_hw[i] - 1) * s.stride[i] + (k[i] - 1) * s.dil[i] + 1 - s.pad[2 * i] -
                       s.pad[2 * i + 1];
        if (n_sizes == 2) {
            if (sizes[i] < base || sizes[i] >= base + s.stride[i])
                return sp_fail(c, "option 'outputSizes' expected item %d in [%lld, %lld), found %lld",
                               i, (long long)base, (long long)(base + s.stride[i]),
                               (long long)sizes[i]);
            hw[i] = sizes[i];
        } else {
            hw[i] = base + opad[i];
        }
        if (hw[i] < 1)
            return sp_fail(c, "output expected spatial dims >= 1, found %lld", (long long)hw[i]);
    }
    int64_t o = og * groups;
    if (check_bias(c, x, o)) return -1;
    return out_dims(c, x, nhwc, o, hw);
}

static int pool2d(sp_ctx *c) {
    if (want_rank4(c, 0)) return -1;
    sp_val *x = sp_in(c, 0);
    spatial s;
    int nhwc, n_win, n_sizes;
    int64_t win[2], sizes[2];
    const char *round;
    char sa[160];
    if (read_spatial(c, &s) || read_layout(c, "layout", &nhwc) ||
        sp_opt_ints(c, "windowDimensions", win, 2, &n_win) ||
        sp_opt_ints(c, "outputSizes", sizes, 2, &n_sizes) ||
        sp_opt_str(c, "roundingType", "floor", &round))
        return -1;
    int ceil_mode = !strcmp(round, "ceil");
    if (!ceil_mode && strcmp(round, "floor"))
        return sp_fail(c, "option 'roundingType' expected \"floor\" or \"ceil\", found \"%s\"", round);
    int64_t ch = nhwc ? x->dims[3] : x->dims[1];
    int64_t in_hw[2] = {nhwc ? x->dims[1] : x->dims[2], nhwc ? x->dims[2] : x->dims[3]};
    if (n_win < 0) {
        win[0] = in_hw[0];
        win[1] = in_hw[1];
    } else if (n_win != 2 || win[0] < 1 || win[1] < 1) {
        return sp_fail(c, "option 'windowDimensions' expected 2 items >= 1, found %d items", n_win);
    }
    if (n_sizes >= 0 && n_sizes != 2)
        return sp_fail(c, "option 'outputSizes' expected 2 items, found %d", n_sizes);
    int64_t hw[2];
    for (int i = 0; i < 2; i++) {
        int64_t span = in_hw[i] + s.pad[2 * i] + s.pad[2 * i + 1];
        int64_t w = (win[i] - 1) * s.dil[i] + 1;
        if (span < w)
            return sp_fail(c, "option 'windowDimensions' expected a window of at most %lld (padded input %s), found %lld",
                           (long long)span, sp_shape_str(sa, sizeof sa, x), (long long)w);
        int64_t lo = (span - w) / s.stride[i] + 1;
        int64_t hi = (span - w + s.stride[i] - 1) / s.stride[i] + 1;
        if (n_sizes == 2) {
            if (sizes[i] != lo && sizes[i] != hi)
                return sp_fail(c, "option 'outputSizes' expected item %d to be %lld or %lld, found %lld",
                               i, (long long)lo, (long long)hi, (long long)sizes[i]);
            hw[i] = sizes[i];
        } else {
            hw[i] = ceil_mode ? hi : lo;
        }
    }
    return out_dims(c, x, nhwc, ch, hw);
}

static int resample2d(sp_ctx *c) {
    if (want_rank4(c, 0)) return -1;
    sp_val *x = sp_in(c, 0);
    double scales[2] = {1.0, 1.0};
    int64_t sizes[2], axes[2] = {2, 3};
    int ns, nz, na;
    const char *mode;
    if (sp_opt_floats(c, "scales", scales, 2, &ns) || sp_opt_ints(c, "sizes", sizes, 2, &nz) ||
        sp_opt_ints(c, "axes", axes, 2, &na) ||
        sp_opt_str(c, "mode", "nearest-neighbor", &mode))
        return -1;
    if (strcmp(mode, "nearest-neighbor") && strcmp(mode, "linear"))
        return sp_fail(c, "option 'mode' expected \"nearest-neighbor\" or \"linear\", found \"%s\"", mode);
    if (ns < 0) scales[0] = scales[1] = 1.0;
    if (na < 0) {
        axes[0] = 2;
        axes[1] = 3;
    }
    if ((ns >= 0 && ns != 2) || (nz >= 0 && nz != 2) || (na >= 0 && na != 2))
        return sp_fail(c, "options 'scales', 'sizes' and 'axes' expected 2 items each, found %d, %d, %d",
                       ns, nz, na);
    if (axes[0] < 0 || axes[0] > 3 || axes[1] < 0 || axes[1] > 3 || axes[0] == axes[1])
        return sp_fail(c, "option 'axes' expected two distinct axes in [0, 4), found [%lld, %lld]",
                       (long long)axes[0], (long long)axes[1]);
    int64_t d[4];
    memcpy(d, x->dims, sizeof d);
    for (int i = 0; i < 2; i++) {
        int64_t v;
        if (nz == 2) {
            v = sizes[i];
        } else {
            if (!(scales[i] > 0))
                return sp_fail(c, "option 'scales' expected items > 0, found %g", scales[i]);
            v = (int64_t)floor((double)x->dims[axes[i]] * scales[i]);
        }
        if (v < 1) return sp_fail(c, "output expected resampled dims >= 1, found %lld", (long long)v);
        d[axes[i]] = v;
    }
    return sp_set_out(c, 0, x->dtype, 4, d);
}

const sp_rule sp_rules_conv[] = {
    {BERTH_OP_CONV2D, conv2d},
    {BERTH_OP_CONV_TRANSPOSE2D, conv_transpose2d},
    {BERTH_OP_AVERAGE_POOL2D, pool2d},
    {BERTH_OP_MAX_POOL2D, pool2d},
    {BERTH_OP_L2_POOL2D, pool2d},
    {BERTH_OP_RESAMPLE2D, resample2d},
    {BERTH_OP_UNKNOWN, NULL},
};
