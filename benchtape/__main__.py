from benchtape.cli import main

main()
