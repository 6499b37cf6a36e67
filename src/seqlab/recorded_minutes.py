"""Generated from ``benchmarks/results/full_mode.json`` by ``python -m seqlab_instructor.record``:
do not edit.

Minutes of training per notebook and size, measured on x86_64, 2 CPU cores;
the speed probe's reading there (GFLOP/s); the seconds of training of each
class-size configuration of notebooks 04 and 05, largest first.
"""

MINUTES = {
    '01': {'class': 0.6, 'full': 0.6},
    '02': {'class': 1.4, 'full': 1.4},
    '03': {'class': 3.2, 'full': 4.9},
    '04': {'class': 10.7, 'full': 71.6},
    '05': {'class': 12.7, 'full': 44.7},
    '06': {'class': 4.8, 'full': 19.3},
    '07': {'class': 6.8, 'full': 40.9},
    '08': {'class': 6.5, 'full': 18.8},
}

RECORD_SPEED = 190.5

PLAN_SECONDS = {
    '04': [643.9, 369.0, 233.0],
    '05': [760.6, 456.0, 317.0, 180.0],
}
