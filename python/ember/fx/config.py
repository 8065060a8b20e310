"""Settings of ember.fx."""

# Emit the source location of each node as a comment in print_readable().
disable_progress = True
verbose_progress = False
