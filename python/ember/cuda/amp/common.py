import ember


def amp_definitely_not_available():
    return not ember.cuda.is_available()
