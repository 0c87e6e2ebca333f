"""``python -m floydwarp``: the command line."""
from floydwarp.cli import main

if __name__ == "__main__":
    main()
