from tablescout.cli import main

main()
