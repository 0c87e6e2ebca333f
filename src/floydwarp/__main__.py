"""``python -m floydwarp``: the command line."""
from floydwarp.launch import main

if __name__ == "__main__":
    main()
