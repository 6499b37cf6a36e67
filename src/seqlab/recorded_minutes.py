"""Generated from ``benchmarks/results/full_mode.json`` by ``python -m seqlab_instructor.record``:
do not edit.

Minutes of training per notebook and size, measured on x86_64, 2 CPU cores.
"""

MINUTES = {
    '01': {'class': 0.2, 'full': 0.2},
    '02': {'class': 0.8, 'full': 0.8},
    '03': {'class': 2.0, 'full': 2.7},
    '04': {'class': 10.7, 'full': 71.6},
    '05': {'class': 12.7, 'full': 44.7},
    '06': {'class': 3.5, 'full': 22.4},
    '07': {'class': 6.3, 'full': 42.3},
    '08': {'class': 4.1, 'full': 17.6},
}
