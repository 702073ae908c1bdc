/* Instruction-fetch misses of a recorded block trace under one fetch geometry: the model of
 * mcu/emulate.py (Emulator._fetch_lines) in C, so that mcu/cortexm_fit.py re-prices a run under
 * many geometries without re-emulating it (Python takes ~1 us per line, this ~5 ns).
 *
 * blocks[i] = address << 16 | size of the i-th executed block (Emulator.trace). A block in
 * [flash_lo, flash_hi) fetches the lines address / line_bytes .. (address + size - 1) / line_bytes
 * in order; entering the line already buffered is free; with a cache (sets > 0), a set-associative
 * LRU of `ways` lines per set, a hit is free; every other line fetch is a miss. The machine starts
 * with no line buffered and an empty cache. Returns the misses of blocks[split..n); *before gets
 * those of blocks[0..split). -1 for bad arguments or no memory.
 */
#include <stdint.h>
#include <stdlib.h>

int64_t fetch_misses(const uint64_t *blocks, int64_t n, int64_t split, uint64_t flash_lo, uint64_t flash_hi,
                     uint32_t line_bytes, uint32_t sets, uint32_t ways, int64_t *before)
{
    if (!blocks || n < 0 || split < 0 || split > n || line_bytes == 0 || ways == 0 || ways > 64 || sets > (1u << 20))
        return -1;
    int64_t *tag = NULL;  /* per set: `ways` slots, least recently used first; used[s] of them filled */
    uint32_t *used = NULL;
    if (sets) {
        tag = malloc(sizeof *tag * (size_t)sets * ways);
        used = calloc(sets, sizeof *used);
        if (!tag || !used) {
            free(tag);
            free(used);
            return -1;
        }
    }
    int64_t cur = -1, misses = 0, first = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == split)
            first = misses;
        uint64_t addr = blocks[i] >> 16, size = blocks[i] & 0xffff;
        if (addr < flash_lo || addr >= flash_hi || size == 0)
            continue;
        int64_t lo = (int64_t)(addr / line_bytes), hi = (int64_t)((addr + size - 1) / line_bytes);
        for (int64_t ln = lo; ln <= hi; ln++) {
            if (ln == cur)
                continue;
            cur = ln;
            if (sets) {
                uint32_t s = (uint32_t)(ln % sets);
                int64_t *t = tag + (size_t)s * ways;
                uint32_t k = 0, u = used[s];
                while (k < u && t[k] != ln)
                    k++;
                if (k < u) { /* hit: most recently used last */
                    for (; k + 1 < u; k++)
                        t[k] = t[k + 1];
                    t[u - 1] = ln;
                    continue;
                }
                if (u == ways) { /* evict the least recently used */
                    for (k = 0; k + 1 < u; k++)
                        t[k] = t[k + 1];
                    t[u - 1] = ln;
                } else {
                    t[u] = ln;
                    used[s] = u + 1;
                }
            }
            misses++;
        }
    }
    if (split == n)
        first = misses;
    free(tag);
    free(used);
    if (before)
        *before = first;
    return misses - first;
}
