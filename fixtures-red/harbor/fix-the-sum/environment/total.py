print(sum(range(1, 10)))
