"""Generated from ``benchmarks/results/full_mode.json`` by ``python -m seqlab_instructor.record``:
do not edit.

Minutes of training per notebook and size, measured on x86_64, 2 CPU cores.
"""

MINUTES = {
    '01': {'class': 0.6, 'full': 0.6},
    '02': {'class': 1.9, 'full': 1.9},
    '03': {'class': 3.1, 'full': 3.8},
    '04': {'class': 10.7, 'full': 71.6},
    '05': {'class': 12.7, 'full': 44.7},
    '06': {'class': 4.2, 'full': 21.1},
    '07': {'class': 6.8, 'full': 40.9},
    '08': {'class': 6.4, 'full': 15.2},
}
