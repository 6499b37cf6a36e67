"""What a notebook's kernel runs besides the library: the setup call and the exercises' checks.

Nothing in the library imports this package, and this package never imports
``seqlab_instructor``. Importing it loads nothing; import the module you need.
"""
