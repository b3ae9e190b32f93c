# (5) noise scale for a target epsilon, accuracy and a 95% interval, diffprivlib 0.6.6
# (the scale is sensitivity / epsilon; the accuracy is computed by hand).
import math

from diffprivlib.mechanisms import Laplace

laplace = Laplace(epsilon=1.0, sensitivity=1.0)
accuracy = math.log(1 / 0.05) / laplace.epsilon
release = laplace.randomise(len(df))
print(accuracy, (release - accuracy, release + accuracy))
