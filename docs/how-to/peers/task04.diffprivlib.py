# (4) several queries under one budget, showing what remains, diffprivlib 0.6.6.
from diffprivlib import BudgetAccountant
from diffprivlib.tools import count_nonzero, mean

accountant = BudgetAccountant(epsilon=1.0)
print(mean(df["age"], epsilon=0.5, bounds=(18, 90), accountant=accountant))
print(count_nonzero(df["age"], epsilon=0.25, accountant=accountant))
print(accountant.remaining())
