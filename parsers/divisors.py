"""The divisors of a whole number, in time that does not grow with its square root.

A progress bar's total is the steps per epoch times the epochs; the Trainer's logs are numbered
by trying its divisors (parsers/steps.py). Trial division to the square root hangs on a total
of 2**64 (a log can print any number): this factors with Pollard's rho (Brent's variant) behind
a deterministic Miller-Rabin test, a few milliseconds for any 64-bit number. Past what an
index `long` holds a total is no count of steps: no divisors. Pure.
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd, isqrt

LONG_MAX = 2**63 - 1
MAX_DIVISORS = 1 << 17  # a number below 2**63 has at most 103,680 divisors (OEIS A066150)

# Deterministic Miller-Rabin bases for every n < 3.3 * 10**24 (Sorenson and Webster 2015).
_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
_SMALL_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)


def divisors(n: int) -> list[int]:
    """Every divisor of `n` (1 <= n <= 2**63 - 1), ascending; [] for anything else."""
    if type(n) is not int or n < 1 or n > LONG_MAX:
        return []
    return list(_divisors(n))


@lru_cache(maxsize=256)
def _divisors(n: int) -> tuple[int, ...]:
    found = [1]
    for prime, power in sorted(_factor_counts(n).items()):
        found = [d * prime**k for d in found for k in range(power + 1)]
        if len(found) > MAX_DIVISORS:  # cannot happen below 2**63; a bound all the same
            break
    return tuple(sorted(found))


def _factor_counts(n: int) -> dict[int, int]:
    counts: dict[int, int] = {}
    for p in _SMALL_PRIMES:
        while n % p == 0:
            counts[p] = counts.get(p, 0) + 1
            n //= p
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if m == 1:
            continue
        if _is_prime(m):
            counts[m] = counts.get(m, 0) + 1
            continue
        root = isqrt(m)
        if root * root == m:
            stack += [root, root]
            continue
        d = _rho(m)
        stack += [d, m // d]
    return counts


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in _BASES:
        x = pow(a, d, n)
        if x == 1 or x == n - 1:
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _rho(n: int) -> int:
    """A nontrivial factor of the composite odd `n` (Brent's cycle finding; constants tried in
    turn, deterministic)."""
    for c in range(1, n):
        y, m, g, r, q = 2, 128, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(m, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = gcd(q, n)
                k += m
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = gcd(abs(x - ys), n)
        if g != n:
            return g
    return n  # not reached for a composite n
