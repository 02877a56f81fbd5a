/* An index a gather reads from a graph input is checked by the engine
 * before the backend sees it: out of range is an error naming the input,
 * the element and the node, never an out-of-bounds read. */
#include <stdio.h>
#include <string.h>

#include "archive.h"
#include "berth/berth.h"
#include "check.h"
#include "slice_fixture.h"

int main(void) {
    slice_model m; /* only for its temp dir and file helpers */
    if (slice_model_write(&m, 1)) return 1;
    float table[10][2];
    for (int i = 0; i < 10; i++) {
        table[i][0] = (float)i;
        table[i][1] = (float)(100 + i);
    }
    berth_st_tensor t = {"embed.table", BA_F32, 2, {10, 2}, table, sizeof table};
    char path[256];
    berth_error err;
    snprintf(path, sizeof path, "%s/table.safetensors", m.dir);
    CHECK(berth_st_write(path, &t, 1, NULL, &err) == 0);
    slice_write_file(&m, "gather.webnn",
                     "webnn_graph \"lookup\" v2 {\n"
                     "  inputs { ids: i64[dyn(\"batch\", 4), 3]; }\n"
                     "  consts { table: f32[10, 2] @weights(\"embed.table\"); }\n"
                     "  nodes { y = gather(table, ids, axis=0); }\n"
                     "  outputs { y; }\n}\n",
                     path, sizeof path);
    berth_executor *ex;
    CHECK(berth_executor_open(slice_write_file(&m, "gather.ini",
                                               "[model]\ngraph = gather.webnn\nweights = table.safetensors\n"
                                               "[buckets]\nb = batch=4\n",
                                               path, sizeof path),
                              NULL, &ex, &err) == BERTH_OK);
    if (check_failures) {
        fprintf(stderr, "open: %s\n", err.msg);
        return check_exit();
    }
    int64_t ids[2][3] = {{0, 9, 3}, {5, 5, 1}};
    berth_tensor in = {BERTH_DTYPE_I64, 2, {2, 3}, ids, sizeof ids, 0};
    berth_tensor out;
    memset(&out, 0, sizeof out);
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_OK);
    CHECK(out.rank == 3 && out.dims[0] == 2 && out.dims[1] == 3 && out.dims[2] == 2);
    for (int r = 0; r < 2 && out.data; r++)
        for (int k = 0; k < 3; k++) {
            const float *y = (const float *)out.data + (r * 3 + k) * 2;
            CHECK(y[0] == (float)ids[r][k] && y[1] == (float)(100 + ids[r][k]));
        }
    ids[1][2] = 10;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "input 'ids' element 5 is 10, outside [-10, 10) for the gather at node 'y'");
    ids[1][2] = -11;
    CHECK(berth_executor_run(ex, 0, &in, 1, &out, 1, NULL, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "element 5 is -11");
    berth_tensor_release(&out);
    berth_executor_close(ex);
    slice_model_remove(&m);
    return check_exit();
}
