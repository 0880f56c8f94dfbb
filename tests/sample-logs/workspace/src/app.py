from foo import greet

# TODO: read the name from the command line
print(greet("world"))
