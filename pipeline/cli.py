def main(argv=None):
    print("gangscope")
    return 0
