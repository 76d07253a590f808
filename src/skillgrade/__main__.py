from skillgrade.cli.main import main

main()
