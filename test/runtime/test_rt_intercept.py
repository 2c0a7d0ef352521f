"""test_rt_intercept.py - libc interceptors count user buffers like LLVM's.

Each heap block is filled by the program (progs/interceptors.c) with char stores (one count per
byte written, terminator included), handed to one libc function, then
freed.  TotalAccessCount = the stores + ceil(len/8) for every range the
interceptor reads or writes, with the lengths of LLVM's sanitizer_common /
memprof interceptors (strict_memcmp=1, strict_string_checks=0).  The same
program linked with LLVM 22's runtime gives the same numbers, except for
stpcpy and memccpy, which LLVM 22 does not intercept (uncounted there).
Covered: str*, mem*, read/write/pread/pwrite/readv/writev, fread/fwrite/
fgets/fputs, atoi/atol/atoll/strtol/strtoll.
"""
import harness
import rt_common


def c(n):
    """Counts of one range of n bytes: one per 8 bytes."""
    return (n + 7) // 8


def stores(s):
    return len(s) + 1


ACCESSES = {
    "strlen": stores("hello world") + c(12),
    "strnlen": stores("hello world") + c(5),
    "strcmp_a": 22 + c(21), "strcmp_b": 22 + c(21),
    "strncmp_a": 22 + c(10), "strncmp_b": 22 + c(10),
    "strcasecmp_a": 16 + c(16), "strcasecmp_b": 16 + c(16),
    "strncasecmp_a": 16 + c(9), "strncasecmp_b": 16 + c(9),
    "strchr": 20 + c(17),               # up to and including the match
    "strchr_miss": 20 + c(20),          # whole string with its NUL
    "strrchr": 20 + c(20),
    "strstr_h": 26 + c(16 + 3),         # up to the end of the match
    "strstr_n": 4 + c(4),
    "strcasestr_h": 26 + c(16 + 3),
    "strcasestr_n": 4 + c(4),
    "strspn_s": 16 + c(13), "strspn_set": 3 + c(3),
    "strcspn_s": 23 + c(21), "strcspn_set": 3 + c(3),
    "strpbrk_s": 21 + c(21), "strpbrk_set": 4 + c(4),
    "strcpy_src": 28 + c(28), "strcpy_dst": c(28),
    "strncpy_src": 11 + c(11), "strncpy_dst": c(40),
    "stpcpy_src": 28 + c(28), "stpcpy_dst": c(28),
    # strcat: source with NUL; destination read up to its NUL (17) and
    # written from there (11 bytes): two ranges.
    "strcat_src": 11 + c(11), "strcat_dst": 18 + c(17) + c(11),
    # strncat(b, a, 4): source min(4, 4+1)=4; LLVM counts 4+1 written.
    "strncat_src": 11 + c(4), "strncat_dst": 18 + c(17) + c(5),
    "memcmp_a": 39 + c(40), "memcmp_b": 39 + c(40),
    "bcmp_a": 39 + c(33), "bcmp_b": 39 + c(33),
    "memchr": 39 + c(21),
    "memrchr": 39 + c(40),
    "memccpy_src": 39 + c(21), "memccpy_dst": c(21),
    "memcpy_src": 39 + c(40), "memcpy_dst": c(40),
    "memmove": 39 + c(50) + c(50),      # same block read and written
    # past 64 bytes: the interceptors' out-of-line path
    "memcpy_big_src": 39 + c(200), "memcpy_big_dst": c(200),
    "memcmp_big_a": 39 + c(100), "memcmp_big_b": 39 + c(100),
    "intrinsic_src": 39 + c(40) + c(200), "intrinsic_dst": c(40) + c(200),
    "memset": c(65),
    "write": 39 + c(40), "read": c(40),
    # writev: 20 bytes of a, 11 of b (the iovec array itself is on the stack)
    "writev_a": 39 + c(20), "writev_b": 11 + c(11),
    # readv gets the 31 bytes writev sent: 24 into a, 7 into b
    "readv_a": c(24), "readv_b": c(7),
    "fwrite": 39 + c(40), "fputs": 10 + c(10),
    "fread": c(24),                     # 6 items of 4 bytes
    # fgets reads from offset 24 of the 40 bytes fwrite wrote: the string
    # stops at the terminator fill() stored at offset 38.
    "fgets": c(len("opqrstuvwxyzAB") + 1),
    "pwrite": 39 + c(33), "pread": c(33),
    # conversions: the characters consumed + 1; with no digits, the blanks
    # and sign skipped + 1; an invalid base counts nothing
    "atoi": 12 + c(8 + 1), "atol": 16 + c(10 + 1), "atoll": 5 + c(3 + 1),
    "strtol_none": 8 + c(4 + 1),
    "strtoll_hex": 22 + c(21 + 1),      # overflow still consumes every digit
    "strtol_badbase": 4,
}

SIZES = {"memmove": 72, "memset": 72, "memcpy_big_src": 200, "memcpy_big_dst": 200,
         "memcmp_big_a": 100, "memcmp_big_b": 100, "intrinsic_src": 200,
         "intrinsic_dst": 200}

# LLVM 22 has no stpcpy or memccpy interceptor: only the program's stores.
LLVM22_UNCOUNTED = {"stpcpy_src": 28, "stpcpy_dst": 0,
                    "memccpy_src": 39, "memccpy_dst": 0}


def sites_of(accesses):
    """One 40-byte block (72 where SIZES says) per marker, allocated once."""
    return {n: (1, SIZES.get(n, 40), a) for n, a in accesses.items()}


class Interceptors(rt_common.ThreeRuntimes):
    PROG = "interceptors.c"
    EXPECTED = sites_of(ACCESSES)
    LLVM22 = sites_of(LLVM22_UNCOUNTED)


if __name__ == "__main__":
    harness.main()
